// add_policy_uses: the cycles per policy that --stats prints for auto and the bench's JSON
// lists, summed over generations in order of first use.
#include "spec/cycle_stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace sf {
namespace {

CycleStats cycle(const char* policy, int accepted, double draft, double verify) {
  CycleStats c;
  c.policy = policy;
  c.accepted = accepted;
  c.draft_seconds = draft;
  c.verify_seconds = verify;
  return c;
}

TEST(PolicyUses, CountsCyclesTokensAndSecondsPerPolicyInOrderOfFirstUse) {
  std::vector<PolicyUse> uses;
  add_policy_uses({cycle("plain", 0, 0, 1.0), cycle("lever", 3, 0.5, 2.0), cycle("plain", 0, 0, 1.0)}, &uses);
  add_policy_uses({cycle("lever", 1, 0.25, 1.0), cycle("chain:4", 2, 0.125, 1.0)}, &uses);
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_EQ(uses[0].policy, "plain");
  EXPECT_EQ(uses[0].cycles, 2u);
  EXPECT_EQ(uses[0].tokens, 2u);
  EXPECT_DOUBLE_EQ(uses[0].seconds, 2.0);
  EXPECT_EQ(uses[1].policy, "lever");
  EXPECT_EQ(uses[1].cycles, 2u);
  EXPECT_EQ(uses[1].tokens, 6u) << "accepted nodes plus one bonus token per cycle";
  EXPECT_DOUBLE_EQ(uses[1].seconds, 3.75);
  EXPECT_EQ(uses[2].policy, "chain:4");
  EXPECT_EQ(uses[2].tokens, 3u);
}

}  // namespace
}  // namespace sf
