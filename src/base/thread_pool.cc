#include "base/thread_pool.h"

#include <algorithm>

namespace sf {

namespace {
// Spin iterations before a worker falls back to sleeping on the condition variable.
// Roughly 50-100 microseconds on current cores: long enough to bridge the gap between
// consecutive ops of one forward pass, short enough not to burn a core while idle.
constexpr int kSpinIterations = 20000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

int ThreadPool::hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) {
  n_threads_ = n_threads > 0 ? n_threads : hardware_threads();
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunk(int index) {
  if (index < task_parts_) {
    const int64_t begin = task_n_ * index / task_parts_;
    const int64_t end = task_n_ * (index + 1) / task_parts_;
    if (begin < end) (*task_)(begin, end, index);
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  while (true) {
    uint64_t gen = generation_.load(std::memory_order_acquire);
    for (int spin = 0; gen == seen && spin < kSpinIterations; ++spin) {
      cpu_relax();
      gen = generation_.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_) return;
    run_chunk(index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                              int64_t grain) {
  if (n <= 0) return;
  const int64_t max_parts = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  const int parts = static_cast<int>(std::min<int64_t>(n_threads_, max_parts));
  if (parts <= 1) {
    fn(0, n, 0);
    return;
  }
  task_ = &fn;
  task_n_ = n;
  task_parts_ = parts;
  pending_.store(n_threads_ - 1, std::memory_order_release);
  {
    // Taking the lock orders the generation bump with sleepers' predicate checks.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  run_chunk(0);
  // Spin, then yield: if a worker was descheduled (machine oversubscribed), spinning on
  // would only steal the core it needs to finish.
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpinIterations) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  task_ = nullptr;
}

}  // namespace sf
