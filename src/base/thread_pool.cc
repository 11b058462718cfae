#include "base/thread_pool.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "base/timer.h"

namespace sf {

namespace {
// How long a worker spins before it falls back to sleeping on the condition variable: long
// enough to bridge the gap between consecutive ops of one forward pass (a few
// microseconds), short enough not to hold a core through an I/O stall or the drafting
// between passes, when the streamer's I/O thread and the draft need it. Measured in time,
// not in pause instructions: a pause costs 5 ns on some cores and 18 ns on this project's
// AMD machine, where the old 20,000 pauses spun for 360 us.
constexpr double kSpinSeconds = 50e-6;
// Pauses between two looks at the clock.
constexpr int kPausesPerClockRead = 16;
// The caller's wait at the end of an op: spin this many pauses, then yield.
constexpr int kCallerSpinIterations = 20000;
// Chunks per thread: enough for load balance when a thread is slow, few enough that the
// claiming overhead stays negligible.
constexpr int64_t kChunksPerThread = 8;

constexpr uint64_t kFieldBits = 20;
constexpr uint64_t kFieldMask = (uint64_t{1} << kFieldBits) - 1;
uint64_t generation_of(uint64_t s) { return s >> (2 * kFieldBits); }
int64_t parts_of(uint64_t s) { return static_cast<int64_t>((s >> kFieldBits) & kFieldMask); }
int64_t next_of(uint64_t s) { return static_cast<int64_t>(s & kFieldMask); }

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
    state_.store((generation_of(state_.load()) + 1) << (2 * kFieldBits), std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

int64_t ThreadPool::grain_for_work(double work_per_item, int64_t min_grain) const {
  const double items = static_cast<double>(min_chunk_work_) / std::max(1.0, work_per_item);
  return std::max<int64_t>(min_grain, static_cast<int64_t>(std::ceil(items)));
}

void ThreadPool::run_chunks(uint64_t gen, int thread_index) {
  while (true) {
    uint64_t s = state_.load(std::memory_order_acquire);
    if (generation_of(s) != gen) return;
    const int64_t parts = parts_of(s), chunk = next_of(s);
    if (chunk >= parts) return;
    if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) continue;
    // The claimed chunk keeps the generation unfinished, so task_ and task_n_ are stable.
    const int64_t begin = task_n_ * chunk / parts, end = task_n_ * (chunk + 1) / parts;
    if (begin < end) (*task_)(begin, end, thread_index);
    completed_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  while (true) {
    uint64_t gen = generation_of(state_.load(std::memory_order_acquire));
    const double spin_until = gen == seen ? now_seconds() + kSpinSeconds : 0;
    for (int spin = 1; gen == seen; ++spin) {
      cpu_relax();
      gen = generation_of(state_.load(std::memory_order_acquire));
      if (spin % kPausesPerClockRead == 0 && now_seconds() > spin_until) break;
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_of(state_.load(std::memory_order_acquire)) != seen; });
      gen = generation_of(state_.load(std::memory_order_acquire));
    }
    seen = gen;
    if (stop_) return;
    run_chunks(gen, index);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn, int64_t grain) {
  if (n <= 0) return;
  const int64_t max_parts = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  const int64_t parts = std::min<int64_t>({max_parts, n_threads_ * kChunksPerThread, int64_t(kFieldMask)});
  if (parts <= 1 || n_threads_ == 1) {
    fn(0, n, 0);
    return;
  }
  const double start = now_seconds();
  task_ = &fn;
  task_n_ = n;
  completed_.store(0, std::memory_order_relaxed);
  const uint64_t gen = generation_of(state_.load(std::memory_order_relaxed)) + 1;
  {
    // Publishing under the lock orders it with sleepers' predicate checks (no lost wakeup).
    std::lock_guard<std::mutex> lock(mutex_);
    state_.store((gen << (2 * kFieldBits)) | (static_cast<uint64_t>(parts) << kFieldBits), std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks(gen, 0);
  const double own_chunks_done = now_seconds();
  // Only chunks already claimed by other threads are waited for. Spin, then yield: if a
  // worker was descheduled mid-chunk, spinning would steal the core it needs.
  for (int spin = 0; completed_.load(std::memory_order_acquire) != parts; ++spin) {
    if (spin < kCallerSpinIterations) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  const double end = now_seconds();
  ++usage_.ops;
  usage_.seconds += end - start;
  usage_.wait_seconds += end - own_chunks_done;
}

}  // namespace sf
