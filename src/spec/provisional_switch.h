// ProvisionalSwitch: whether EdgeLLM lends the target's I/O waits to provisional drafting
// (provisional_generation.h), decided by what it measurably does to the session's tokens
// per second.
//
// Why measure instead of always lending: the paper's premise is a draft step worth running
// ahead. Where the draft's step is tiny next to a pass and the drafting between passes is
// already hidden behind the streamer's read-ahead, lending saves almost nothing, while the
// hand-over (the worker's wake-up, its cancelled step, the carried chain's shape) costs a
// little every cycle; on 2 cores, stories260K runs with lending ranged from somewhat slower
// to somewhat faster than without (docs/edgellm.md, the `edgellm-noprovisional` rows).
// Whether lending pays depends on the draft, the storage and the cores, so it is measured
// on this session: the two choices are arms of an ArmSelector (the
// regret-budgeted selector `auto` uses), each run for blocks of kBlockCycles cycles, since
// lending in one cycle pays off in the next one's drafting (its carried tokens) and a block
// keeps both halves in the same arm's measurement. Lending is tried first.
// Not thread-safe.
#pragma once

#include "spec/arm_selector.h"

namespace sf {

class ProvisionalSwitch {
 public:
  static constexpr int kBlockCycles = 8;
  ProvisionalSwitch();
  // Whether the next cycle lends the target's waits to provisional drafting.
  bool lending() const { return arm_ == kLend; }
  // A finished cycle: tokens emitted, seconds of drafting and verification.
  void observe(double tokens, double seconds);
  // The measured rates of the two arms (0: not measured yet).
  double lending_rate() const { return selector_.rate(kLend); }
  double not_lending_rate() const { return selector_.rate(kNoLend); }

 private:
  static constexpr int kLend = 0, kNoLend = 1;
  ArmSelector selector_;
  int arm_ = kLend;
  int cycles_ = 0;  // of the current block
  double tokens_ = 0, seconds_ = 0;
};

}  // namespace sf
