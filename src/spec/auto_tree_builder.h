// AutoTreeBuilder: `--spec auto`. It owns several tree builders (arms) over the session's
// one drafter and, each cycle, lets an ArmSelector (arm_selector.h) pick the one whose
// measured tokens per second is best on this machine, model, budget and storage, exploring
// the others out of a small regret budget. An arm that drafts nothing is plain decoding, so
// auto can always fall back to Flash-AR's speed where speculation does not pay (a small
// resident target), and grow LEVER's trees where a pass costs tens of draft steps.
//
// The arms (make_auto_arms):
//  - with a draft model: plain, CoordGen's retrieval trees drafted from the context alone
//    and sized by LEVER's gain/cost rule, then LEVER's gain/cost trees (pruned at the early exit where the
//    session has a pruner, while pruning measurably pays: prune_switches_), EdgeLLM's trees (grown in the most likely
//    order; with provisional drafting during the target's I/O where it measurably pays: EdgeLlmTreeBuilder's
//    MeasuredSwitch) and chains of 2, 4 and 8 tokens, and, on a machine with the cores for it, Mirror-SD's window (a
//    chain whose verification drafts the next window's rollouts on the draft's own threads beside the target's later
//    layers), all drafted by the draft model: the session's drafter is then a HybridDrafter, and each cycle drafts from
//    the source its arm names (a text that repeats itself is drafted for free where the draft model guesses wrong);
//  - without one: plain, and CoordGen's retrieval trees (node budgets 4 and 16).
// Looking at the context first: what retrieval is worth depends on the text in front of it
// (a prompt that repeats itself, or none), which a rate over past cycles cannot see. So
// beside a draft model, each cycle whose chosen arm drafts otherwise first builds the
// retrieval arm's gain/cost tree, and takes that tree instead when the tree's own expected
// tokens per second (its calibrated gain over the profile's cost) beats the best arm's
// measured rate, also while the selector explores a slower arm; else it drops it. It puts an
// arm's first trial off at most kMaxTrialDeferrals cycles in a row. Each prompt
// starts the retrieval calibration's reliability afresh (begin_generation). A cycle whose
// retrieval tree was taken counts in no arm's rate (the arms are measured on their own
// trees); the retrieval builder's calibration, which decides the next take, learns from
// it, and from every look not taken as well: after the cycle, the target's tokens (the
// accepted path and the bonus) show how far the dropped retrieval tree's walk would have
// gone, row by row, which is what verifying it would have shown in greedy decoding (and a
// draw from the target's choices when sampling). Learning from the takes alone, which are
// the looks whose estimate came out highest, the calibration could stay optimistic: in one
// stories260K run at 0% (real disk) auto's median repetition took 44 retrieval trees per
// 1,024 tokens, which emitted 1.8 tokens a cycle, ~0.6x the rate of the arms they replaced
// (docs/auto.md, "Learning from the looks not taken"). The same walk is a cycle of the
// retrieval arm that auto did not have to run: the tokens it would have emitted, in the time
// the cycle would have taken with the look's drafting and the retrieval tree's rows; told to
// the selector as an inferred cycle (as the shorter chains' are), it keeps that arm measured
// on every look, where re-measuring it on cycles of its own was ~1% of the time on
// stories260K (EMULATED 250 MB/s, 25%), texts that rarely repeat. A look costs the retrieval
// drafter's catch-up and a few automaton walks, so it is made only while that stays under
// 1% of the chosen arm's cycle. Added for the synthetic 3B, where CoordGen wins on the one
// prompt that repeats itself and auto's rates, learnt mostly on the other, never chose it
// there. Every arm's trees are verified by the same lossless verifier, so auto is lossless
// whatever it picks; its choices depend only on past timings and the context (the look),
// never on the sampler's random stream.
//
// A look's walk that the cycle's tokens cut short (the tree goes on past them) goes on
// along the next cycles' tokens until it leaves the tree (left out at the cycle's end, as it
// was until 2026-12-07, the arm was inferred on its shorter trees only). And where the
// selector itself re-measures the retrieval arm (a stale arm, explored), auto looks
// instead: the tree is verified as the arm's own cycle only where it is expected to beat the
// best arm's rate; else the best arm runs, and the look's walk is the retrieval arm's
// inferred cycle, charged as no exploring. On stories260K at a 100% budget, where a look is
// too dear to make every cycle, re-measuring it in cycles of its own (~60-170 us for ~1.3
// tokens against ~30 us for a plain one) cost ~0.9% of auto's time in a warm session; by
// looks, ~0.6% (medians over the sessions; docs/auto.md, "After the run of record at
// 52b5e57").
//
// Plain decoding, once chosen as the best arm where a look is too dear to make and a plain
// cycle is one cheap pass (a resident target), runs a stretch of kPlainStretch cycles before
// the next choice, while it stays the best arm: choosing every cycle cost ~1 us of its ~23 us
// on stories260K.
//
// Switching from plain decoding to a drafting arm costs the draft model's catch-up on every
// token plain decoding emitted meanwhile. Auto measures that cost per token (from the draft
// model's long catch-ups) and passes it to the selector as each drafting arm's entry cost,
// so at a budget where plain decoding wins it does not keep paying for catch-ups to
// re-measure arms that lose (arm_selector.h).
//
// The chains are prefixes of one another: a cycle of chain:8 shows how many tokens chain:4
// and chain:2 would have accepted (the target checks a chain's nodes in order, so a shorter
// chain accepts min(accepted, k); greedy exactly, sampled in distribution), and their time
// is chain:8's less the draft steps and verification rows they would not have run (the
// latency profile's estimate of the rows' cost). The selector takes those as inferred
// cycles of the shorter chains (ArmSelector::observe_inferred), so they stay measured
// without cycles of their own: on stories260K at a 50% budget, exploring chain:2 beside
// the chain auto settled on took ~50 of ~1,100 cycles over four repetitions.
// Each arm learns its own statistics and pacing from its own cycles only. What a cycle says
// about the machine and the model pair is shared: every cycle refines every arm's
// verification latency profile (a pass over n rows costs the same whoever built the tree)
// and, among the arms that draft from the same source, acceptance calibration (how often
// the target picks a draft token of a given probability does not depend on which arm put it
// in the tree; an arm that runs rarely would otherwise shape its trees from a handful of its
// own cycles).
// What auto measured can start a later session (auto_profile.h): profile() is what to keep,
// start_from() gives it back; the session reads and writes the file.
// Not thread-safe.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/arm_selector.h"
#include "spec/auto_profile.h"
#include "spec/measured_switch.h"
#include "spec/tree_builder.h"

namespace sf {

// What an arm drafts from.
enum class ArmSource {
  kNone,       // nothing: plain decoding, which lets the draft model fall behind
  kModel,      // the draft model (the only drafter, or a HybridDrafter's model)
  kRetrieval,  // the context (the only drafter, or a HybridDrafter's retrieval): the draft model falls behind
};

struct AutoArm {
  std::string name;
  std::unique_ptr<TreeBuilder> builder;
  bool prune = false;  // the session's pruner (LEVER's early exit) applies to this arm's trees
  ArmSource source = ArmSource::kModel;
  // The most tokens one of its cycles can emit: its deepest tree + 1 (plain decoding, which
  // does not draft: 1). See ArmSelector::set_max_tokens_per_cycle.
  double max_tokens = std::numeric_limits<double>::infinity();
  // A chain of this many draft tokens (0: not a chain). A chain's cycle also tells what
  // every shorter chain from the same source would have done (observe_shorter_chains).
  int chain_length = 0;
};

// The arms for a config (method kAuto): drafting with a draft model and by retrieval when
// it names one, else by retrieval. `prune`: the session prunes LEVER's trees.
// `parallel_rollouts`: the session can draft Mirror-SD's rollouts beside a pass (with a
// draft model, auto then has the mirror arm; auto_has_mirror_arm, mirror_rollout.h).
std::vector<AutoArm> make_auto_arms(const SpecConfig& config, bool prune, bool parallel_rollouts = false);

class FrontierTreeBuilder;
class HybridDrafter;

class AutoTreeBuilder : public TreeBuilder {
 public:
  AutoTreeBuilder(std::vector<AutoArm> arms, ArmSelectorOptions options = {});
  const char* name() const override { return "auto"; }
  Status build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) override;
  void observe(const TokenTree& tree, const CycleStats& stats) override;
  // The retrieval arms' calibrations start their reliability afresh (begin_text): whether a
  // text repeats itself is the text's own.
  void begin_generation() override;
  // The profile of the first arm that has one, drafting with the draft model if any arm
  // does (the session seeds it; the others get a copy at the first build, without its
  // draft costs where they draft from another source).
  LatencyProfile* latency_profile() override;
  // The arm that built the last tree (the retrieval arm when auto took its tree instead).
  const char* policy() const override { return arms_[static_cast<size_t>(built_by_)].name.c_str(); }
  // The building arm prunes where the session offers a pruner, while its switch measures
  // pruning to pay (prune_switches_).
  bool wants_pruning() const override {
    return arms_[static_cast<size_t>(built_by_)].prune && prune_switches_[static_cast<size_t>(built_by_)].on();
  }
  double threshold() const override { return arms_[static_cast<size_t>(built_by_)].builder->threshold(); }
  // Drafting during verification is the building arm's (EdgeLLM's, where it lends); a
  // carried tree goes back to it (build()).
  bool provisional_anchor(int32_t* leaf, const NodeDistribution** dist) const override {
    return arms_[static_cast<size_t>(built_by_)].builder->provisional_anchor(leaf, dist);
  }
  bool accepts_carried() const override { return arms_[static_cast<size_t>(built_by_)].builder->accepts_carried(); }
  // Mirror-SD's rollouts beside the verification: the building arm's (the mirror arm's).
  bool wants_parallel_rollouts() const override {
    return arms_[static_cast<size_t>(built_by_)].builder->wants_parallel_rollouts();
  }

  const ArmSelector& selector() const { return selector_; }
  const std::vector<AutoArm>& arms() const { return arms_; }
  // The selector's choice for the last cycle (charged for it unless auto took the retrieval
  // tree instead: policy() then names the retrieval arm).
  int current_arm() const { return current_; }
  // Cycles each arm has run, in arm order (for --stats).
  std::vector<int64_t> arm_cycles() const;
  // Seconds per token of the draft's catch-up, from its recent long ones (0: none yet).
  double catch_up_seconds_per_token() const { return catch_up_per_token_; }

  // Every measured arm's lasting evidence and the catch-up's cost (the key and the count
  // of generations are the caller's).
  AutoProfile profile() const;
  // Starts from an earlier session's profile, before this session's first cycle: its arms
  // (by name) count as measured, so none is tried again just for being new. Arms the
  // profile does not name are tried as usual.
  void start_from(const AutoProfile& profile);

 private:
  // The extra seconds each arm would take if run now: an arm drafting with the draft model
  // pays its catch-up on the tokens the draft has not run, beyond those of its typical cycle.
  std::vector<double> entry_seconds(const Drafter& drafter) const;
  // Beside a draft model: builds the retrieval arm's gain/cost tree first, and keeps it
  // (true) when it expects more tokens per second than the chosen arm measures (see the
  // file comment); else clears the tree and forgets the look (false). `looked`: set when it
  // built the tree (not when the look costs too much of a cycle to make now).
  Result<bool> look_at_retrieval(HybridDrafter& hybrid, const BuildContext& ctx, TokenTree* tree, bool* looked);
  // The selector chose to re-measure the retrieval arm: builds its tree (a look) and keeps
  // it (true: the arm's own cycle) where its expected tokens per second beat the best arm's;
  // else the look is not taken (false), the arm counts as measured now, and the walk of the
  // untaken look is its cycle, inferred (see the file comment).
  Result<bool> remeasure_retrieval_by_look(HybridDrafter& hybrid, const BuildContext& ctx, TokenTree* tree);
  // The look's tree built into `tree`, timed (look_seconds_).
  Status build_look(HybridDrafter& hybrid, const BuildContext& ctx, TokenTree* tree);
  // Keeps the look in `tree` as this cycle's untaken look (look_tree_), leaving `tree` empty
  // for the arm that runs.
  void leave_look_untaken(HybridDrafter& hybrid, TokenTree* tree);
  // `builder`'s build with the hybrid (when there is one) drafting from `source` alone
  // (kNone: as it is), and back to the session's sources after.
  Status build_from_source(TreeBuilder& builder, ArmSource source, Drafter& drafter, HybridDrafter* hybrid,
                           const BuildContext& ctx, TokenTree* tree);
  // The source of the arm whose builder owns `profile` (kNone: no arm's).
  ArmSource source_of(const LatencyProfile* profile) const;
  // Learns the catch-up's cost per token from what a build just ran.
  void observe_catch_up(uint64_t tokens, double seconds);
  // How far the look this cycle did not take (look_tree_) would have gone along the
  // target's tokens of the cycle's verification.
  struct LookWalk {
    int accepted = 0;        // its nodes on that path
    bool cut_short = false;  // the committed tokens ran out where the tree goes on
    int32_t node = 0;        // where it stands when cut short
  };
  // The retrieval calibration learns from the untaken look, walked along the target's tokens
  // of the cycle's verification (`visited`).
  LookWalk observe_untaken_look(const std::vector<VisitedRow>& visited);
  // The untaken look as an inferred cycle of the retrieval arm (ArmSelector::observe_inferred):
  // its walk's tokens, in the cycle's time with the look's drafting and the retrieval tree's
  // rows. So the retrieval arm stays measured without cycles of its own wherever auto looks.
  // A walk cut short goes on along the next cycles' tokens (pending_walk_).
  void infer_retrieval_cycle(const LookWalk& walk, const CycleStats& stats);
  // The pending walk (pending_walk_) along a cycle's committed tokens (`visited`); told to
  // the selector as the retrieval arm's inferred cycle where it ends.
  void continue_pending_walk(const std::vector<VisitedRow>& visited);
  // After a full chain of K nodes by the chosen arm: what each shorter chain arm of the same
  // source would have done, told to the selector as an inferred cycle.
  void observe_shorter_chains(const TokenTree& tree, const CycleStats& stats);
  // Whether `arm` drafts from the draft model with an acceptance calibration that has not
  // yet learnt from kWarmCalibrationRows rows (see before_cold_).
  bool calibration_cold(size_t arm) const;
  // Puts back the evidence of arms whose calibration has become warm (before_cold_).
  void forget_cold_cycles();

  std::vector<AutoArm> arms_;
  ArmSelector selector_;
  // Per arm (used for arms with `prune`): whether its trees are pruned where the session
  // offers its pruner (no layer after the exit layer streams: Session::auto_prunes),
  // measured on this session's cycles of that arm; before, it was assumed to pay there.
  // Pruning saves the later layers' compute for the rows it drops and loses the tokens some
  // of them would have been accepted with, and which wins depends on the model and the
  // machine: on stories260K `lever` ran at 0.90-0.97x `lever-noprune` at every streamed
  // budget of 1677701's report (where auto does not prune) and 0.96x and 1.03x at 100%
  // (where it does). Pruning is tried first (LEVER's own setting).
  std::vector<MeasuredSwitch> prune_switches_;
  // A model arm's cycles run while its acceptance calibration (shared by the arms drafting
  // from the draft model) had learnt from fewer than kWarmCalibrationRows rows measure trees
  // shaped by the calibration's priors, not by this model pair: per arm, its evidence as it
  // was before its first such cycle, put back once the calibration is warm, so the arm is
  // measured afresh on the trees it will build from then on (with none before them, the cold
  // cycles stay as one cycle's evidence: forget_cold_cycles). Why: LEVER
  // is the first model arm tried, and under the priors (r = 0.9, h the identity) its
  // gain/cost trees were shallow and bushy (7 deep against 11 later, EMULATED 25 MB/s at 0%):
  // its trial emitted 3.9 tokens a cycle against lever-noprune's 6.8, auto settled on
  // EdgeLLM's trees, which had the warm calibration LEVER's cycles taught, and re-measuring
  // one cycle every 48 barely moved LEVER's rate (auto 0.92x lever-noprune in both
  // I/O-bound rows of 1677701's report). Not for retrieval arms: their reliability starts
  // afresh with every prompt (begin_generation), so it is never warm for long.
  static constexpr uint64_t kWarmCalibrationRows = 32;
  std::vector<std::optional<ArmSelector::Evidence>> before_cold_;
  int current_ = 0;
  int built_by_ = 0;  // the arm whose builder built the last tree
  // The retrieval arm with gain/cost trees that the look builds (-1 / null: none).
  int retrieval_arm_ = -1;
  FrontierTreeBuilder* retrieval_builder_ = nullptr;
  bool profiles_shared_ = false;
  // Looking at retrieval (look_at_retrieval): its measured cost, and choices since the last.
  static constexpr double kLookShare = 0.01;  // the most of a cycle a look may cost
  // Re-measures a look too dear to make every cycle this often: every 64 choices (a plain
  // stretch is one choice, so every ~1,000 cycles where plain decoding runs in stretches).
  static constexpr int kLookAgainEvery = 64;
  double look_seconds_ = 0;        // a running mean of a look's cost
  double look_build_seconds_ = 0;  // the last look's
  int cycles_since_look_ = 0;      // choices since the last look
  TokenTree look_tree_;            // this cycle's retrieval tree, built and not taken
  bool look_untaken_ = false;      // look_tree_ is this cycle's
  // An untaken look whose walk the cycle's tokens cut short, walked on along the next
  // cycles' tokens (the same generation's) until it leaves its tree, walk_tree_: where it
  // stands, its nodes so far, and its cycle's inferred time.
  struct PendingWalk {
    int32_t node = 0;
    int accepted = 0;
    double draft_seconds = 0;
    double seconds = 0;
  };
  TokenTree walk_tree_;
  std::optional<PendingWalk> pending_walk_;
  static constexpr int kPlainStretch = 16;  // cycles of plain decoding per choice of it as the best arm
  // Stretches only where a plain cycle takes less than this (see build()).
  static constexpr double kPlainStretchBelowSeconds = 100e-6;
  int plain_stretch_left_ = 0;
  bool first_cycle_of_generation_ = false;      // its cycle is no first trial (observe())
  static constexpr int kMaxTrialDeferrals = 3;  // see build()
  int trial_deferrals_ = 0;                     // the look's takes in place of a first trial, in a row
  double catch_up_per_token_ = 0;
};

}  // namespace sf
