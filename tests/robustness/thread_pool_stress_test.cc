// The thread pool under load, for the race detector (scripts/sanitize.sh tsan) as much as
// for correctness: thousands of back-to-back parallel_for calls of every size (the decode
// step's pattern: many small ops, workers spinning between them), each index visited
// exactly once and every write visible to the caller when parallel_for returns; pools
// created and destroyed right after use; several pools driven from several threads at
// once (slots and a draft worker each own one).
#include <gtest/gtest.h>

#include <atomic>
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
