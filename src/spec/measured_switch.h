// MeasuredSwitch: whether a policy runs with an option on or off (EdgeLLM lending the
// target's I/O waits to provisional drafting, auto's LEVER arm pruning its trees at the
// early-exit layer), decided by what the option measurably does to the session's tokens
// per second.
//
// Why measure: whether such an option pays depends on the draft, the model, the storage and
// the cores, and the policies' own cost models do not see the costs that decide it (a
// worker's hand-over on two cores; the tokens a pruned row would have been accepted with).
// The two settings are arms of an ArmSelector (the regret-budgeted selector `auto` uses),
// each run for blocks of kBlockCycles cycles: an option set in one cycle can pay off in the
// next (a chain drafted during the I/O is the next cycle's tree), and a block keeps both
// halves in the same arm's measurement. Once both are measured the faster one runs, and the
// slower one is re-measured only as 3% of the time allows.
// What a switch learnt can start the next session (start_from(), from lasting_evidence()),
// as auto's arms do (auto_profile.h): one session's few dozen blocks cannot tell a 10%
// difference from the noise of a shared machine.
// Not thread-safe.
#pragma once

#include "spec/arm_selector.h"

namespace sf {

class MeasuredSwitch {
 public:
  static constexpr int kBlockCycles = 8;
  // `first_on`: which setting the first block runs.
  explicit MeasuredSwitch(bool first_on = true);
  // Whether the next cycle runs with the option on.
  bool on() const { return arm_ == kOn; }
  // A finished cycle run with the setting on() gave: tokens emitted, seconds it took.
  void observe(double tokens, double seconds);
  // The measured rates of the two settings (0: not measured yet).
  double on_rate() const { return selector_.rate(kOn); }
  double off_rate() const { return selector_.rate(kOff); }
  // A setting's lasting evidence (per block), for a later session's start_from().
  const ArmEvidence& lasting_evidence(bool on) const { return selector_.lasting_evidence(on ? kOn : kOff); }
  // Starts a setting from an earlier session's lasting evidence (before this session's
  // first cycle); with both started, the first block runs the faster one.
  void start_from(bool on, const ArmEvidence& lasting);

 private:
  static constexpr int kOn = 0, kOff = 1;
  ArmSelector selector_;
  int arm_;
  int cycles_ = 0;  // of the current block
  double tokens_ = 0, seconds_ = 0;
};

}  // namespace sf
