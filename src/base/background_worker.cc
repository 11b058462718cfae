#include "base/background_worker.h"

#include "base/check.h"

namespace sf {

BackgroundWorker::BackgroundWorker() : thread_([this] { loop(); }) {}

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
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !busy_; });
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
