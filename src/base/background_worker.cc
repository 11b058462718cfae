#include "base/background_worker.h"

#include "base/check.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace sf {

BackgroundWorker::BackgroundWorker(Priority priority) : priority_(priority), thread_([this] { loop(); }) {
  // Set by the owner, not by the thread itself, so that a boost in wait() cannot race it.
  if (priority_ == Priority::kIdle) set_policy(true);
}

void BackgroundWorker::set_policy(bool idle) {
#if defined(__linux__)
  // Best effort: where the policy cannot be set the worker runs at normal priority, and
  // the ComputeGate still keeps it to the target's waits.
  sched_param param{};
  param.sched_priority = 0;
  (void)pthread_setschedparam(thread_.native_handle(), idle ? SCHED_IDLE : SCHED_OTHER, &param);
#else
  (void)idle;
#endif
}

BackgroundWorker::~BackgroundWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundWorker::run(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SF_CHECK(!busy_, "the background worker is still running a job");
    job_ = std::move(job);
    busy_ = true;
  }
  changed_.notify_all();
}

void BackgroundWorker::wait() {
  const bool boost = priority_ == Priority::kIdle;
  if (boost) set_policy(false);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !busy_; });
  }
  if (boost) set_policy(true);
}

void BackgroundWorker::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stop_ || (busy_ && job_); });
    if (stop_) return;
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    job();
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace sf
