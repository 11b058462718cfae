// BackgroundWorker: one thread of the engine's own that runs one job at a time, handed to
// it by its owner (EdgeLLM's provisional drafting while the target verifies). The thread
// sleeps on a condition variable between jobs; nothing spins.
// run() and wait() must be called by one owner thread, alternately.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace sf {

class BackgroundWorker {
 public:
  BackgroundWorker();
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  // Starts `job` on the worker thread (the previous job must have been waited for).
  void run(std::function<void()> job);
  // Blocks until the job started by run() has returned. Everything the job wrote is
  // visible to the caller afterwards.
  void wait();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> job_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sf
