// BackgroundWorker: one thread of the engine's own that runs one job at a time, handed to
// it by its owner (EdgeLLM's provisional drafting while the target verifies). The thread
// sleeps on a condition variable between jobs; nothing spins.
// At Priority::kIdle (Linux: SCHED_IDLE) the thread runs only on a core no other thread of
// the machine wants: work lent the target's I/O waits then never delays the target's own
// threads or its I/O thread by a scheduler time slice when a wait ends. While the owner
// blocks in wait() the thread runs at normal priority, so a busy machine cannot starve the
// job the owner is waiting for (no priority inversion).
// run() and wait() must be called by one owner thread, alternately.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace sf {

class BackgroundWorker {
 public:
  enum class Priority { kNormal, kIdle };
  explicit BackgroundWorker(Priority priority = Priority::kNormal);
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
  // Linux: the thread's scheduling policy (best effort; elsewhere nothing).
  void set_policy(bool idle);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> job_;
  bool busy_ = false;
  bool stop_ = false;
  Priority priority_;
  std::thread thread_;
};

}  // namespace sf
