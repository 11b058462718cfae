#include "spec/provisional_switch.h"

namespace sf {

namespace {
// Blocks, not cycles, are the selector's unit: re-measure the other arm after 16 blocks
// (128 cycles) when the regret budget (3% of the time) allows.
ArmSelectorOptions switch_options() {
  ArmSelectorOptions o;
  o.explore_share = 0.03;
  o.stale_cycles = 16;
  return o;
}
}  // namespace

ProvisionalSwitch::ProvisionalSwitch() : selector_(2, switch_options()) {}

void ProvisionalSwitch::observe(double tokens, double seconds) {
  tokens_ += tokens;
  seconds_ += seconds;
  if (++cycles_ < kBlockCycles) return;
  selector_.observe(arm_, tokens_, seconds_);
  cycles_ = 0;
  tokens_ = seconds_ = 0;
  arm_ = selector_.choose();
}

}  // namespace sf
