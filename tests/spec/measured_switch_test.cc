// MeasuredSwitch over scripted cycles: the first setting runs a whole block; the faster
// setting then runs nearly always, the slower one only as the regret budget allows; and
// what one switch learnt starts another on the faster setting.
#include "spec/measured_switch.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

// Runs `cycles` cycles in which a cycle with the option on takes `on_seconds` and one with
// it off `off_seconds`, each emitting 4 tokens; returns how many ran with it on.
int cycles_on(MeasuredSwitch& sw, int cycles, double on_seconds, double off_seconds) {
  int on = 0;
  for (int i = 0; i < cycles; ++i) {
    const bool was_on = sw.on();
    on += was_on ? 1 : 0;
    sw.observe(4, was_on ? on_seconds : off_seconds);
  }
  return on;
}

TEST(MeasuredSwitch, RunsTheFirstSettingForABlockThenKeepsTheFasterOne) {
  MeasuredSwitch slower_on(/*first_on=*/true);
  EXPECT_TRUE(slower_on.on()) << "the first setting is tried first";
  EXPECT_EQ(cycles_on(slower_on, MeasuredSwitch::kBlockCycles, 1.1e-3, 1e-3), MeasuredSwitch::kBlockCycles)
      << "a whole block runs before anything is decided";
  EXPECT_EQ(cycles_on(slower_on, MeasuredSwitch::kBlockCycles, 1.1e-3, 1e-3), 0) << "then the other is measured";
  // 10% slower with the option on: over 1000 more cycles it is on only to re-measure.
  const int on = cycles_on(slower_on, 1000, 1.1e-3, 1e-3);
  EXPECT_LE(on, 1000 / 4);
  EXPECT_GT(on, 0) << "the slower setting is still re-measured now and then";
  EXPECT_GT(slower_on.off_rate(), slower_on.on_rate());

  MeasuredSwitch faster_on(/*first_on=*/false);
  EXPECT_FALSE(faster_on.on());
  const int kept = cycles_on(faster_on, 1000 + 2 * MeasuredSwitch::kBlockCycles, 0.8e-3, 1e-3);
  EXPECT_GE(kept, 1000 * 3 / 4) << "an option that pays keeps running";
  EXPECT_GT(faster_on.on_rate(), faster_on.off_rate());
}

TEST(MeasuredSwitch, StartsFromAnEarlierSessionOnTheFasterSetting) {
  MeasuredSwitch earlier(/*first_on=*/true);
  cycles_on(earlier, 400, 1.2e-3, 1e-3);  // off is faster
  MeasuredSwitch later(/*first_on=*/true);
  later.start_from(true, earlier.lasting_evidence(true));
  later.start_from(false, earlier.lasting_evidence(false));
  EXPECT_FALSE(later.on()) << "both settings measured before: the faster one runs first";
  EXPECT_GT(later.off_rate(), later.on_rate());
  // Neither is tried again just for being new: the next 100 cycles are nearly all off.
  EXPECT_LE(cycles_on(later, 100, 1.2e-3, 1e-3), MeasuredSwitch::kBlockCycles);
}

}  // namespace
}  // namespace sf
