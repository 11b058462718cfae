// ProvisionalSwitch over scripted cycles: lending is tried first, for a whole block; the
// faster arm then runs nearly always, and the slower one only as the regret budget allows.
#include "spec/provisional_switch.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

// Runs `cycles` cycles in which a lending cycle takes `lend_seconds` and another
// `plain_seconds`, each emitting 4 tokens; returns how many cycles lent.
int lending_cycles(ProvisionalSwitch& sw, int cycles, double lend_seconds, double plain_seconds) {
  int lent = 0;
  for (int i = 0; i < cycles; ++i) {
    const bool lend = sw.lending();
    lent += lend ? 1 : 0;
    sw.observe(4, lend ? lend_seconds : plain_seconds);
  }
  return lent;
}

TEST(ProvisionalSwitch, LendsFirstForABlockThenKeepsTheFasterChoice) {
  ProvisionalSwitch slower_lending;
  EXPECT_TRUE(slower_lending.lending()) << "lending is tried first";
  EXPECT_EQ(lending_cycles(slower_lending, ProvisionalSwitch::kBlockCycles, 1.1e-3, 1e-3),
            ProvisionalSwitch::kBlockCycles)
      << "a whole block lends before anything is decided";
  EXPECT_EQ(lending_cycles(slower_lending, ProvisionalSwitch::kBlockCycles, 1.1e-3, 1e-3), 0)
      << "then the other arm is measured";
  // 10% slower when lending: over 1000 more cycles it lends only to re-measure.
  const int lent = lending_cycles(slower_lending, 1000, 1.1e-3, 1e-3);
  EXPECT_LE(lent, 1000 / 4);
  EXPECT_GT(lent, 0) << "the slower arm is still re-measured now and then";
  EXPECT_GT(slower_lending.not_lending_rate(), slower_lending.lending_rate());

  ProvisionalSwitch faster_lending;
  const int kept = lending_cycles(faster_lending, 1000 + 2 * ProvisionalSwitch::kBlockCycles, 0.8e-3, 1e-3);
  EXPECT_GE(kept, 1000 * 3 / 4) << "lending that pays keeps running";
  EXPECT_GT(faster_lending.lending_rate(), faster_lending.not_lending_rate());
}

}  // namespace
}  // namespace sf
