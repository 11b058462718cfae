// ThreadPool: a fixed set of workers for data-parallel loops over the hot path.
//
// parallel_for splits [0, n) into small contiguous chunks that threads (the caller
// included) claim dynamically. Dynamic claiming matters on small, shared machines: if a
// worker is descheduled, the caller simply takes its chunks instead of waiting for it.
// Which thread computes a chunk never changes the result. Workers spin briefly before
// sleeping, because a decode step issues ~150 small parallel ops per token and a
// condition-variable wakeup per op would cost milliseconds.
//
// Not re-entrant: parallel_for must not be called from inside a task, and only one thread
// may call it at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
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

  // fn(begin, end, thread_index) for contiguous chunks covering [0, n), each at least
  // `grain` long (except possibly the last). Blocks until every chunk has finished.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn, int64_t grain = 1);

  static int hardware_threads();

  // The grain (items per chunk) that gives every chunk at least min_chunk_work() units of
  // work, given the work of one item (units: multiply-adds or elements touched, roughly a
  // nanosecond's worth or less each). An op smaller than two such chunks runs inline on the
  // calling thread: handing work to another core costs a wakeup, the cache lines of its
  // inputs and outputs and a wait at the end, several microseconds on a VM whose two cores
  // share a physical one, and a tiny model's pass is ~50 ops of a microsecond or less
  // (stories260K: decode 1.5x and 16-row passes 3x faster once ops under 64K multiply-adds
  // stopped being split; 16- and 32-row passes another 1.2-1.3x once ops under 512K stopped
  // too, i.e. a chunk of 256K units: a unit is a fraction of a nanosecond, so a split op
  // below that gave each thread a microsecond or two, less than the hand-off; the 1.1B's
  // ops are megabytes of weights and still split; docs/kernels.md, "The minimum chunk").
  int64_t grain_for_work(double work_per_item, int64_t min_grain = 1) const;
  static constexpr int64_t kDefaultMinChunkWork = 262144;
  int64_t min_chunk_work() const { return min_chunk_work_; }
  // Tests set 1 so that small shapes still exercise the split between threads.
  void set_min_chunk_work(int64_t work) { min_chunk_work_ = work < 1 ? 1 : work; }

  // What parallel_for has cost the calling thread since reset_usage(): the parallel ops
  // run, their seconds, and the seconds it spent waiting, after its own chunks, for other
  // threads to finish theirs (a core idle at the end of an op). Single-threaded calls are
  // not counted. Read and reset by the calling thread only.
  struct Usage {
    uint64_t ops = 0;
    double seconds = 0;
    double wait_seconds = 0;
  };
  const Usage& usage() const { return usage_; }
  void reset_usage() { usage_ = Usage{}; }

 private:
  void worker_loop(int index);
  // Claims and runs chunks of generation `gen` until none are left.
  void run_chunks(uint64_t gen, int thread_index);

  int n_threads_;
  std::vector<std::thread> workers_;
  // The current task. Stable while its generation has unfinished chunks.
  const std::function<void(int64_t, int64_t, int)>* task_ = nullptr;
  int64_t task_n_ = 0;
  // (generation << 40) | (parts << 20) | next unclaimed chunk. One atomic word, so a
  // worker can only claim a chunk of the generation it checked.
  std::atomic<uint64_t> state_{0};
  std::atomic<int64_t> completed_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  Usage usage_;
  int64_t min_chunk_work_ = kDefaultMinChunkWork;
};

}  // namespace sf
