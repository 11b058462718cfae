// ThreadPool: a fixed set of workers for data-parallel loops over the hot path.
//
// parallel_for splits [0, n) into one contiguous chunk per thread (the caller runs chunk
// 0), so a matmul's rows are divided evenly. Workers spin briefly before sleeping, because
// a decode step issues ~150 small parallel ops per token and a condition-variable wakeup
// per op would cost milliseconds. Not re-entrant: parallel_for must not be called from
// inside a task, and only one thread may call it at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sf {

class ThreadPool {
 public:
  // n_threads <= 0 means one per hardware thread.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // fn(begin, end, thread_index) for contiguous chunks covering [0, n). Blocks until all
  // chunks finish. `grain` is the smallest chunk worth a thread.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                    int64_t grain = 1);

  static int hardware_threads();

 private:
  void worker_loop(int index);
  void run_chunk(int index);

  int n_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t, int)>* task_ = nullptr;
  int64_t task_n_ = 0;
  int task_parts_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace sf
