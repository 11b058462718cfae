// ArmSelector: the online choice behind `--spec auto` (auto_tree_builder.h). Each arm is a
// decoding policy (plain decoding, a chain, LEVER's gain/cost trees, ...); a cycle of arm a
// emits tokens_a tokens in seconds_a seconds, and the selector keeps each arm's rate
// (tokens per second, over its recent cycles) and runs the best one.
//
// Why a rate and not a model: the policies' own cost models (LEVER's latency profile and
// calibration) are right in some regimes and badly wrong in others (docs/lever.md: 0.40x
// Flash-AR at a 50% budget on emulated UFS 4.0), while the measured rate of a policy on
// this machine, model, budget and storage is exactly the quantity the user cares about.
//
// Exploration is paid for out of a regret budget. The regret of a cycle run on an arm that
// is not the current best is the time it took beyond what the best arm would have needed
// for the same tokens (seconds - tokens / best_rate); a cycle that beat the best arm's rate
// earns that time back (negative regret), so re-measuring an arm that is in fact better
// pays for itself instead of draining the budget on its unlucky cycles. Trying an arm never run is allowed
// while the summed regret stays under `explore_share` of all the time spent; re-measuring
// one not run for `stale_cycles` cycles, when its typical cycle's regret fits in what is
// left of that budget (of the smaller `far_explore_share` for an arm far behind the best,
// beyond the noise of its rate). So an arm that is very expensive where it loses (a long
// chain with a resident target costs 10-25x plain decoding per token) is tried once and then
// rarely, and an arm that is nearly as good is re-measured often (its cycles cost little
// regret): the loss to exploration stays near explore_share of the run, in every regime,
// without knowing the regime in advance.
//
// Some arms pay a one-off cost to start that grows while they are not run: a draft model
// catches up on every token plain decoding emitted since it last drafted (after 1,000 plain
// tokens, one chain cycle took 23 ms against 0.03 ms plain cycles). The caller passes that
// cost to choose() as each arm's entry seconds; re-measuring a stale arm counts what its
// entry exceeds the best arm's by as regret up front, so after a long plain stretch the
// selector stays plain unless the budget can really pay for the catch-up (it is charged
// anyway, when it happens, by observe()). When the best arm drafts too, a catch-up (a new
// prompt) is paid whichever drafting arm runs, and exploring is not charged for it.
//
// What a session learnt can start the next one (auto_profile.h): besides the recent
// evidence that drives the choice (decay 0.95 per cycle, so ~20 cycles), each arm keeps
// lasting evidence (decay 0.995, ~200 cycles) that is saved at the end of a generation and
// given back to a later session's selector with start_from(). Why both: the recent sums
// follow a change of regime within a few cycles, while telling two near arms apart (6.4
// against 5.5 tokens per cycle, when one cycle emits 1 to 12) takes more cycles than one
// session's regret budget buys (docs/auto.md).
//
// Deterministic (no random numbers): the choice depends only on the observations, so it
// never touches the sampler's random stream. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace sf {

// Decayed sums over an arm's cycles: each new cycle adds its tokens and (counted) seconds
// after multiplying the old sums by the decay.
struct ArmEvidence {
  double tokens = 0;
  double seconds = 0;
  double weight = 0;  // the decayed count of cycles (the sums / weight = a typical cycle)
  // Second moments, for the spread of the cycles around the arm's rate.
  double tokens_sq = 0, seconds_sq = 0, tokens_seconds = 0;

  void add(double decay, double cycle_tokens, double cycle_seconds);
  // The same evidence counted as at most `cycles` cycles (the rate is unchanged; evidence of
  // fewer cycles, or none, as it is).
  ArmEvidence at_most(double cycles) const;
  bool empty() const { return weight <= 0; }
  // Finite sums, positive weight and seconds, nothing negative (e.g. read from a file).
  bool valid() const;
};

struct ArmSelectorOptions {
  double explore_share = 0.03;  // the most of the time that exploration may lose
  int stale_cycles = 48;        // an arm not run for this many cycles is re-measured (when affordable)
  double decay = 0.95;          // weight of an arm's older cycles at each new one of its own
  double outlier_factor = 2.0;  // a cycle counts as at most this many of the arm's typical ones (0: off)
  // Re-measuring an arm far behind the best (measured over at least `far_min_cycles`
  // cycles, its rate plus `plausible_z` standard errors still short of the best rate) may
  // use only `far_explore_share` of the time: it looks for a change of regime, which is
  // rare, while near-equal arms are where exploring finds the best. At a 100% budget every
  // drafting arm is several times slower than plain decoding, and spending all of
  // explore_share on re-measuring them cost auto ~3% against Flash-AR in long sessions
  // (ArmSelector.AnArmFarBehindIsReMeasuredFromASmallerShare).
  double plausible_z = 2.0;
  double far_min_cycles = 4;
  double far_explore_share = 0.01;
  double lasting_decay = 0.995;  // the lasting evidence's decay (what a later session starts from)
  // Whether the lasting evidence can also show an arm far behind (far_behind()).
  bool far_by_lasting_evidence = true;
  // An arm measured over fewer than `thin_cycles` (decayed) cycles and not far behind is
  // measured again at once, not after stale_cycles, while its typical cycle fits in the
  // regret budget: a drafting arm's cycles emit anywhere from 1 to ~17 tokens, and one or
  // two cycles of 1 token buried the best arm for a whole session (EMULATED I/O-bound 25%:
  // LEVER run in 2 cycles of ~200, auto 0.84x LEVER alone), which auto's profile then
  // carried on to the next.
  double thin_cycles = 4;
};

class ArmSelector {
 public:
  ArmSelector(int n_arms, ArmSelectorOptions options = {});
  // The arm to run next: an unexplored or stale arm when the regret budget allows,
  // otherwise the best. Arms are explored first in their index order.
  // entry_seconds (empty, or one per arm): the extra seconds an arm would take if run now
  // and not before (a draft model's catch-up); what it exceeds the best arm's by must fit
  // in the regret budget for a first trial, and is added to the regret of re-measuring.
  int choose(const std::vector<double>& entry_seconds = {});
  // What a cycle of `arm` did: tokens emitted and seconds taken (draft + verification).
  // `own_seconds` (a part of `seconds`, e.g. the drafting) is the arm's own work and is
  // never capped as an outlier: a periodic expensive cycle of a policy (LEVER's probe tree,
  // a draft model catching up after a run of plain decoding) is a real cost of that arm,
  // not noise, while the stalls that make cycle times heavy-tailed are in the rest.
  void observe(int arm, double tokens, double seconds, double own_seconds = 0);
  // What a cycle of `arm` would have done, inferred from another arm's cycle (a chain of 4
  // from a chain of 8's: the tokens it would have accepted are known exactly, its time is
  // the longer chain's less the draft steps and verification rows it would not have run).
  // Counts as evidence of the arm's rate, recent and lasting, and as a fresh measurement
  // (no stale re-measure is due), but not as a cycle run: no time, no regret, no count.
  void observe_inferred(int arm, double tokens, double seconds, double own_seconds = 0);
  // A measurement of `arm` that its caller made without running the arm, and whose inferred
  // cycle comes later (observe_inferred) or never: the arm counts as freshly measured (no
  // stale re-measure is due), with no evidence yet, no time, no regret.
  void mark_measured(int arm);
  // A cycle of `arm` whose time says nothing of the arm's rate (one-off costs that any arm
  // would have paid there): its time and regret count, as a cycle run, but not as evidence.
  // An arm so left without evidence is the next choice, whatever the budget: its trial is
  // paid for, and waiting for the budget to allow another brought it back at a prompt's
  // first cycle again (where a draft model's catch-up is cheapest), so chain:8 was tried
  // twice a session at a 100% budget and never measured (~3% of the time; docs/auto.md).
  void observe_time(int arm, double tokens, double seconds);

  int n_arms() const { return static_cast<int>(arms_.size()); }
  // The arm with the highest measured rate (-1 before any observation).
  int best() const;
  double rate(int arm) const;              // tokens per second over the arm's recent cycles; 0 if never run
  double tokens_per_cycle(int arm) const;  // over its recent cycles; 0 if never run
  // The standard error of rate(arm), from the spread of its recent cycles around that rate
  // (infinite before any cycle).
  double rate_error(int arm) const;
  // Cycles the arm ran since this selector was created (a session's own, not start_from's).
  int64_t cycles(int arm) const { return arms_[static_cast<size_t>(arm)].cycles; }
  // The arm's lasting evidence, for a later session's start_from().
  const ArmEvidence& lasting_evidence(int arm) const { return arms_[static_cast<size_t>(arm)].lasting; }
  // Starts an arm from an earlier session's lasting evidence (before this session's cycles):
  // the arm counts as measured (it is not tried as new), and its recent evidence is the
  // lasting one counted as at most a steady state's 1 / (1 - decay) cycles, so this
  // session's own cycles take over as fast as they would from any earlier ones.
  void start_from(int arm, const ArmEvidence& lasting);
  // An arm's evidence, recent and lasting, as it is now (to put back with restore()).
  struct Evidence {
    ArmEvidence recent, lasting;
  };
  Evidence evidence(int arm) const;
  // Puts an arm's evidence back as an earlier evidence() gave it, forgetting the cycles
  // observed since as evidence of its rate (they stay counted as time and regret). With no
  // evidence back, the arm is tried again as new.
  void restore(int arm, const Evidence& evidence);
  // The most tokens one cycle of `arm` can emit (plain decoding: 1). An arm that cannot beat
  // the best at its measured cost per cycle even then counts as far behind from its first
  // cycle: re-measuring it looks for a change of regime, from the small far share. Without
  // it, plain decoding's streamed passes (1 token in the time a tree emits 5) took half of
  // the exploration in the I/O-bound regimes until it had run far_min_cycles cycles.
  void set_max_tokens_per_cycle(int arm, double max_tokens);
  double regret_seconds() const { return regret_seconds_; }
  double total_seconds() const { return total_seconds_; }

 private:
  struct Arm {
    ArmEvidence recent;   // decay options_.decay: the rate the choice uses
    ArmEvidence lasting;  // decay options_.lasting_decay: what a later session starts from
    int64_t cycles = 0;
    int64_t last_cycle = -1;                                      // the selector's cycle count when the arm last ran
    double max_tokens = std::numeric_limits<double>::infinity();  // per cycle (set_max_tokens_per_cycle)
  };
  // The regret one typical cycle of `arm` costs against the best arm `top`.
  double expected_regret(int arm, int top) const;
  // Whether `arm` is far behind the best arm `top` (see far_explore_share).
  bool far_behind(int arm, int top) const;
  // Whether `arm` is measured over fewer than thin_cycles cycles.
  bool thinly_measured(int arm) const;
  // Counts a cycle run: its time, its regret against the best arm, the cycle counts.
  void charge(int arm, double tokens, double seconds);
  // Adds a cycle to the arm's evidence, a cycle far slower than its typical one capped as
  // noise (see observe()).
  void add_evidence(int arm, double tokens, double seconds, double own_seconds);

  ArmSelectorOptions options_;
  std::vector<Arm> arms_;
  int64_t cycle_ = 0;
  double total_seconds_ = 0;
  double regret_seconds_ = 0;
  double far_regret_seconds_ = 0;  // the part of it spent on arms far behind
  int retry_ = -1;                 // an arm to run next (observe_time), or -1
};

}  // namespace sf
