// LazyThreadPool: httplib's task queue (one job per accepted connection) with threads
// started on demand, up to a maximum, instead of all at start-up.
//
// Why: the server needs up to parallel + queue-size + 4 connection threads (70 by
// default) so that every slot and every queued request can hold a connection, but
// httplib's own ThreadPool starts them all and hands each connection to whichever idle
// thread wakes first. Over a long run every one of them serves requests and keeps what a
// request left behind in it: its touched stack pages (the forward pass runs on the
// connection's thread) and its malloc arena / thread cache. The server's RSS then crept
// up by about 60 KB per thread for hundreds of requests (docs/robustness.md, section 4).
// Here a thread is started only when a job arrives and no started thread is idle, so the
// number of threads, and that memory, follows the peak number of concurrent connections.
// Started threads stay until shutdown().
// Thread-safe.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sf::server {

class LazyThreadPool : public httplib::TaskQueue {
 public:
  explicit LazyThreadPool(size_t max_threads);
  ~LazyThreadPool() override;

  void enqueue(std::function<void()> fn) override;
  // Runs the jobs already queued, then stops and joins every thread.
  void shutdown() override;

  size_t threads_started() const;
  size_t idle_threads() const;

 private:
  void work();

  const size_t max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable job_ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;  // started threads waiting for a job
  bool shutdown_ = false;
};

}  // namespace sf::server
