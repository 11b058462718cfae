#include "server/lazy_thread_pool.h"

#include <algorithm>

namespace sf::server {

LazyThreadPool::LazyThreadPool(size_t max_threads) : max_threads_(std::max<size_t>(1, max_threads)) {}

LazyThreadPool::~LazyThreadPool() { shutdown(); }

void LazyThreadPool::enqueue(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(fn));
    // Each idle thread will take one queued job; start one more only for a job that no
    // idle thread will take.
    if (jobs_.size() > idle_ && threads_.size() < max_threads_) threads_.emplace_back([this] { work(); });
  }
  job_ready_.notify_one();
}

void LazyThreadPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
    threads.swap(threads_);
  }
  job_ready_.notify_all();
  for (std::thread& t : threads) t.join();
}

size_t LazyThreadPool::threads_started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

size_t LazyThreadPool::idle_threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_;
}

void LazyThreadPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    ++idle_;
    job_ready_.wait(lock, [&] { return !jobs_.empty() || shutdown_; });
    --idle_;
    if (jobs_.empty()) return;  // shut down, nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace sf::server
