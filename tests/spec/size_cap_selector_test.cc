// SizeCapSelector: the tokens a cycle would have given under each smaller cap are read off
// its accepted path; seconds come from each cap's own cycles; the choice follows the rate.
#include "spec/size_cap_selector.h"

#include <gtest/gtest.h>

#include <vector>

namespace sf {
namespace {

// Caps: none (64), 16, 8.
SizeCapSelector selector() { return SizeCapSelector({64, 16, 8}); }

TEST(SizeCapSelector, ReadsEverySmallerCapsTokensOffOneCycle) {
  SizeCapSelector s = selector();
  // An uncapped tree of 40 nodes whose accepted path runs through nodes 0, 3, 9, 20, 31:
  // cut to 16 nodes it keeps 0, 3, 9 (4 tokens with the bonus one), cut to 8 nodes 0, 3.
  s.observe(0, 40, {0, 3, 9, 20, 31}, 1.0);
  // Seconds are known for the uncapped arm only; its rate is 6 tokens per second.
  EXPECT_DOUBLE_EQ(s.rate(0), 6.0);
  EXPECT_EQ(s.rate(1), 0) << "no cycle of its own: seconds unknown";
  s.observe(1, 16, {0, 3, 9}, 0.5);
  s.observe(2, 8, {0, 3}, 0.25);
  // Tokens per cycle (decayed means over the cycles that covered the cap):
  //  cap 16: 4 (from the uncapped cycle) and 4 (its own) -> 4; 0.5 s -> 8/s.
  //  cap 8: 3, 3 (cut from both) and 3 (its own) -> 3; 0.25 s -> 12/s.
  EXPECT_NEAR(s.rate(1), 8.0, 1e-9);
  EXPECT_NEAR(s.rate(2), 12.0, 1e-9);
  // The cycle cut at 16 says nothing about the uncapped tree's tokens: still 6 per cycle.
  EXPECT_NEAR(s.rate(0), 6.0, 1e-9);
  EXPECT_EQ(s.best(), 2);
}

TEST(SizeCapSelector, ATreeThatStoppedBelowItsCapCountsForTheBiggerCapsToo) {
  SizeCapSelector s = selector();
  s.observe(2, 8, {0, 1}, 0.1);  // cut at 8: nothing about 16 or none
  EXPECT_EQ(s.rate(0), 0);
  s.observe(2, 5, {0, 1, 2}, 0.1);  // stopped at 5 under a cap of 8: the same under any cap
  s.observe(0, 30, {0, 1, 2, 3}, 0.1);
  // Uncapped tokens: 4 (the 5-node tree) and 5 (its own) -> the decayed mean.
  const double w = 0.98 + 1;
  EXPECT_NEAR(s.rate(0), (0.98 * 4 + 5) / w / 0.1, 1e-6);
}

// Simulated sessions: a cycle's accepted length is noisy (the drafts' luck), and each cap
// sees the same drafts. Where a pass costs as much as 40 draft steps (the phone regime),
// the uncapped tree's extra tokens pay; where the nodes are dear, the small cap wins.
int settled_arm(double pass_seconds, double node_seconds) {
  SizeCapSelector s = selector();
  uint32_t rng = 12345;
  std::vector<int> runs(3, 0);
  for (int cycle = 0; cycle < 300; ++cycle) {
    const int arm = s.choose();
    ++runs[static_cast<size_t>(arm)];
    const int cap = s.cap(arm);
    // The accepted path: nodes 0, 2, 5, 9, 14, 20, 27, 35 (deeper nodes come later in the
    // tree's order); how far this cycle's drafts run is uniform in 0..8.
    rng = rng * 1664525u + 1013904223u;
    const int depth = static_cast<int>((rng >> 16) % 9);
    const std::vector<int32_t> full = {0, 2, 5, 9, 14, 20, 27, 35};
    std::vector<int32_t> path;
    for (int i = 0; i < depth && full[static_cast<size_t>(i)] < cap; ++i) path.push_back(full[static_cast<size_t>(i)]);
    const int size = std::min(cap, 48);
    s.observe(arm, size, path, pass_seconds + node_seconds * size);
  }
  int most = 0;
  for (int a = 1; a < 3; ++a)
    if (runs[static_cast<size_t>(a)] > runs[static_cast<size_t>(most)]) most = a;
  EXPECT_EQ(s.best(), most);
  EXPECT_GE(runs[static_cast<size_t>(most)], 240) << "exploration stays small";
  return most;
}

TEST(SizeCapSelector, SettlesOnTheFastestCapDespiteNoisyAcceptance) {
  // Phone-like: a 40 ms pass, 0.05 ms per node -> the uncapped tree (4.5 tokens vs 3.3 at
  // 8 nodes, for 2.2 ms more) wins.
  EXPECT_EQ(settled_arm(40e-3, 0.05e-3), 0);
  // Resident-like: a 1 ms pass, 0.2 ms per node -> cap 8 (3.3 tokens in 2.6 ms) wins.
  EXPECT_EQ(settled_arm(1e-3, 0.2e-3), 2);
}

}  // namespace
}  // namespace sf
