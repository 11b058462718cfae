// The thread pool under load, for the race detector (scripts/sanitize.sh tsan) as much as
// for correctness: thousands of back-to-back parallel_for calls of every size (the decode
// step's pattern: many small ops, workers spinning between them), each index visited
// exactly once and every write visible to the caller when parallel_for returns; pools
// created and destroyed right after use; several pools driven from several threads at
// once (slots and a draft worker each own one).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/thread_pool.h"

namespace sf {
namespace {

// Runs `calls` parallel_for calls of varying size and grain; returns false on the first
// index visited other than once or a thread index out of range.
bool hammer(ThreadPool& pool, int calls, uint32_t seed) {
  std::vector<int> visits;
  uint32_t x = seed;
  for (int c = 0; c < calls; ++c) {
    x = x * 1664525u + 1013904223u;
    const int64_t n = static_cast<int64_t>(x >> 22);  // 0..1023
    const int64_t grain = 1 + static_cast<int64_t>((x >> 8) % 17);
    visits.assign(static_cast<size_t>(n), 0);
    std::atomic<bool> bad_thread{false};
    pool.parallel_for(
        n,
        [&](int64_t b, int64_t e, int t) {
          if (t < 0 || t >= pool.size()) bad_thread = true;
          for (int64_t i = b; i < e; ++i) ++visits[static_cast<size_t>(i)];  // plain writes: TSan checks the handoff
        },
        grain);
    if (bad_thread) return false;
    for (int v : visits)
      if (v != 1) return false;
  }
  return true;
}

TEST(ThreadPoolStress, EveryIndexOnceAcrossThousandsOfCalls) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_TRUE(hammer(pool, 3000, 17u + threads)) << threads << " threads";
  }
}

// The usage the calling thread sees (what `specflash speed` reports as "core idle"): one
// op per parallel call, none for a one-thread pool or a one-chunk call, the wait at the
// ends never more than the ops' time, and a reset that starts again from zero.
TEST(ThreadPoolUsage, CountsParallelOpsAndTheCallersWaitWithinTheirTime) {
  ThreadPool pool(2);
  pool.reset_usage();
  const auto sleepy = [](int64_t, int64_t, int) { std::this_thread::sleep_for(std::chrono::microseconds(200)); };
  for (int c = 0; c < 5; ++c) pool.parallel_for(16, sleepy);
  pool.parallel_for(1, sleepy);  // one chunk: run by the caller alone, not a parallel op
  const ThreadPool::Usage u = pool.usage();
  EXPECT_EQ(u.ops, 5u);
  EXPECT_GE(u.seconds, 5 * 8 * 200e-6) << "16 chunks of 200 us on two threads take at least 8 of them";
  EXPECT_GE(u.wait_seconds, 0.0);
  EXPECT_LE(u.wait_seconds, u.seconds);
  pool.reset_usage();
  EXPECT_EQ(pool.usage().ops, 0u);
  EXPECT_EQ(pool.usage().seconds, 0.0);
  ThreadPool single(1);
  single.parallel_for(16, sleepy);
  EXPECT_EQ(single.usage().ops, 0u);
}

// Ops too small to repay a hand-off run inline: the grain gives each chunk at least the
// pool's minimum work, so an op of less than two chunks' work is one chunk on the caller.
TEST(ThreadPoolGrain, SmallOpsRunInlineLargeOnesSplit) {
  ThreadPool pool(2);
  const int64_t min_work = pool.min_chunk_work();
  EXPECT_EQ(pool.grain_for_work(static_cast<double>(min_work)), 1);
  EXPECT_EQ(pool.grain_for_work(static_cast<double>(min_work) / 4), 4);
  EXPECT_EQ(pool.grain_for_work(static_cast<double>(min_work) / 4, 16), 16) << "the caller's minimum grain holds";
  EXPECT_EQ(pool.grain_for_work(0), min_work) << "no work per item counts as one unit";
  // 64 items of a 64th of the minimum each: one chunk in all, run by the caller.
  pool.reset_usage();
  std::atomic<int> other_threads{0};
  const auto count_others = [&](int64_t, int64_t, int thread) { other_threads += thread != 0; };
  pool.parallel_for(64, count_others, pool.grain_for_work(static_cast<double>(min_work) / 64));
  EXPECT_EQ(pool.usage().ops, 0u);
  EXPECT_EQ(other_threads.load(), 0);
  // 64 items of the minimum each: split (a parallel op), whoever runs the chunks.
  pool.parallel_for(64, count_others, pool.grain_for_work(static_cast<double>(min_work)));
  EXPECT_EQ(pool.usage().ops, 1u);
  // A test can lower the minimum to split even tiny shapes.
  pool.set_min_chunk_work(1);
  EXPECT_EQ(pool.grain_for_work(1), 1);
  pool.parallel_for(64, count_others, pool.grain_for_work(1));
  EXPECT_EQ(pool.usage().ops, 2u);
}

TEST(ThreadPoolStress, CreatedUsedAndDestroyedRepeatedly) {
  for (int i = 0; i < 200; ++i) {
    ThreadPool pool(1 + i % 4);
    ASSERT_TRUE(hammer(pool, 3, 99u + i));
  }
}

TEST(ThreadPoolStress, SeveralPoolsFromSeveralThreadsAtOnce) {
  constexpr int kPools = 3;
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (int i = 0; i < kPools; ++i) pools.push_back(std::make_unique<ThreadPool>(2));
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kPools; ++i)
    callers.emplace_back([&, i] {
      if (!hammer(*pools[i], 1000, 1234u * (i + 1))) ++failures;
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace sf
