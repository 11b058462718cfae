#include "spec/measured_switch.h"

namespace sf {

namespace {
// Blocks, not cycles, are the selector's unit: re-measure the other setting after 16 blocks
// (128 cycles) when the regret budget (3% of the time) allows.
ArmSelectorOptions switch_options() {
  ArmSelectorOptions o;
  o.explore_share = 0.03;
  o.stale_cycles = 16;
  return o;
}
}  // namespace

MeasuredSwitch::MeasuredSwitch(bool first_on) : selector_(2, switch_options()), arm_(first_on ? kOn : kOff) {}

void MeasuredSwitch::observe(double tokens, double seconds) {
  tokens_ += tokens;
  seconds_ += seconds;
  if (++cycles_ < kBlockCycles) return;
  selector_.observe(arm_, tokens_, seconds_);
  cycles_ = 0;
  tokens_ = seconds_ = 0;
  arm_ = selector_.choose();
}

void MeasuredSwitch::start_from(bool on, const ArmEvidence& lasting) {
  selector_.start_from(on ? kOn : kOff, lasting);
  // Both measured before: start with the faster (choose() keeps the first arm's index
  // order only for settings never measured).
  if (cycles_ == 0 && selector_.best() >= 0 && selector_.rate(kOn) > 0 && selector_.rate(kOff) > 0)
    arm_ = selector_.best();
}

}  // namespace sf
