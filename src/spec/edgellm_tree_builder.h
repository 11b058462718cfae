// EdgeLlmTreeBuilder: EdgeLLM's confidence-shaped token tree (grown in the most likely
// order by default, or by the paper's branch pacer) with its self-adaptive verification
// timing (paper III-B and III-C).
//
// Branches are the root-to-leaf paths; a branch's cumulative confidence C_i is the product
// of the draft probabilities along it. The pacer wants branch lengths proportional to
// confidence (L_i = C_i * M, M the tree's size) and, one token at a time, extends the branch
// whose shortfall M * C_i - TB_i is largest, which is what most reduces the distance
// D = max_i (M * C_i - TB_i) to that shape. A step either extends an existing leaf by its
// best draft token (one draft pass: the autoregressive loop, with branches isolated by the
// drafter's tree mask, never by switching contexts) or opens a branch at a drafted node
// with its next-best token (no pass: the distribution is known). Deviation: when a leaf
// must be drafted, the other open leaves are drafted in the same pass (batched), which
// leaves the tree's shape unchanged and cuts the number of draft passes. Deviation
// (EdgeLlmConfig::calibrated_pacer, default on): the pacer's C_i is the calibrated chance
// that the target accepts the branch (LEVER's calibration of each draft probability,
// learned online) rather than the raw product of draft probabilities; on stories260K at 0%
// its trees accept 4.0-4.6 tokens per pass against 3.75-3.95 for the raw ones (15 paired
// repetitions, docs/edgellm.md), because the distilled draft is under-confident about its
// top token. With the paced shape T_c and alpha stay on the raw probabilities, as in the
// paper. Deviation (EdgeLlmConfig::shape = kMostLikely, the default since the paced shape
// only tied chain:8 at 0% on stories260K): each step adds the node whose path is most likely
// accepted instead of the one furthest below its paced length, and the fallback reads T_c
// on those calibrated chances; the cost stop, size bound and provisional drafting are the
// same. The paced shape (kPaced, the paper's pacer above) stays selectable
// (`--edgellm-shape paced`).
//
// Fallback: before each step, the tree-cumulative confidence T_c = max_i C_i is compared
// with alpha; below it, the tree goes to verification. After verification alpha adapts on
// the best-matching branch (the most confident branch through the last accepted node):
//   all N_all of its tokens accepted:  alpha <- alpha * 0.5
//   N_correct < N_all accepted:        alpha <- alpha / T_c^((N_all - N_correct) / N_all)
// (paper eq. 3), kept within [alpha_min, alpha_max]; the tree is also bounded in size and
// depth. The size bound follows the paper's premise that a batched verification costs
// about what a single row costs while it is I/O-bound: from the session's measured latency
// profile (refined online with every verification), the tree's rows may add at most
// kVerifySlack times the cost of a one-row pass.
//
// Cost stop (beyond the paper, EdgeLlmConfig::cost_stop): the pacer chooses only among
// steps whose expected tokens per second beat the session's realised tokens per second over
// recent cycles. A step's expected tokens are the chance that its node is accepted (LEVER's
// acceptance calibration, learned online from this builder's verified rows); its cost is one
// more verification row and, for a leaf not drafted yet, a draft pass (both from the
// measured profile; a pass only for what runs past the target's pending read-ahead, the
// I/O of the next pass's first streamed units still to come when drafting starts). Before the first cycle the bar is
// the tree's own expected rate (1 + the sum of its nodes' chances over this cycle's draft time and a pass over its
// rows). A step below the long-run rate lowers it (the marginal rule for maximising a renewal reward rate); the tree's
// own rate would be the wrong bar, inflated by nodes carried in for free from provisional drafting. When no step pays,
// the tree goes to verification. Where a pass costs tens of draft steps (the paper's regime) only near-hopeless steps
// are left out; where it costs a few, trees stay small.
//
// Provisional drafting (paper III-D) is offered only where it can save time and then only
// while it measurably pays on this session. A kept chain saves the next cycle's drafting,
// and the streamer already loads the next pass's first units while a tree is drafted, so
// lending is tried only where recent cycles' drafting ran past that pending read-ahead
// (EdgeLlmConfig::lend_only_exposed); where it does, lending and not lending are arms of a
// regret-budgeted selector over blocks of cycles (measured_switch.h). Lending is not
// free on two cores: waking the target's threads on a core the worker holds made a lent
// cycle 6-23% longer on the real disk (four traced runs), and the selector, unable to tell
// such a loss from noise in a few hundred cycles, still lent in 38-78% of them.
//
// Children are always the drafter's top tokens (deterministic), so verification is
// lossless under sampling too (each child is a one-hot draft; verifier.h).
//
// Ablations and baselines from the same code: pacer off = one chain (the top branch);
// fallback off = verify at a fixed tree size; token_threshold > 0 = BiLD-style chain that
// stops at the first draft token less likely than a fixed threshold.
// Not thread-safe.
#pragma once

#include <vector>

#include "spec/acceptance_calibration.h"
#include "spec/measured_switch.h"
#include "spec/size_cap_selector.h"
#include "spec/spec_config.h"
#include "spec/tree_builder.h"

namespace sf {

class EdgeLlmTreeBuilder : public TreeBuilder {
 public:
  // The most rows one draft pass runs (the leaf the pacer extends and other open leaves).
  static constexpr int kDraftBatch = 8;
  // How much dearer than a one-row pass a verification may get from the tree's rows (1:
  // at most twice as dear), with the row cost fitted around kTypicalRows rows.
  static constexpr double kVerifySlack = 1.0;
  static constexpr int kTypicalRows = 8;
  // EdgeLlmConfig::lend_only_exposed: the share of a cycle that its drafting must run past
  // the pending read-ahead (on average over recent cycles) before lending is tried. On the
  // real disk stories260K's drafting runs 0.8% of a cycle past it (0% and 50% budgets) and
  // a lent cycle took 6-23% longer.
  static constexpr double kExposedDraftShare = 0.05;

  EdgeLlmTreeBuilder(const EdgeLlmConfig& config, int max_nodes, int max_depth, const char* name);
  const char* name() const override { return name_; }
  Status build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) override;
  void observe(const TokenTree& tree, const CycleStats& stats) override;
  void begin_generation() override { first_of_prompt_ = true; }
  bool provisional_anchor(int32_t* leaf, const NodeDistribution** dist) const override;
  bool accepts_carried() const override { return true; }
  double threshold() const override { return uses_alpha() ? alpha_ : -1; }
  LatencyProfile* latency_profile() override { return &profile_; }
  AcceptanceCalibration* acceptance_calibration() override { return &calibration_; }

  double alpha() const { return alpha_; }
  const MeasuredSwitch& lending() const { return lending_; }
  // The size cap the last tree was built under (0: none).
  int size_cap() const { return size_arm_ == 0 ? 0 : size_selector_.cap(size_arm_); }
  const SizeCapSelector& size_selector() const { return size_selector_; }
  // Whether lending is tried at all (EdgeLlmConfig::lend_only_exposed): the recent cycles'
  // drafting ran past the pending read-ahead by more than kExposedDraftShare of a cycle.
  bool drafting_exposed() const;

 private:
  bool uses_alpha() const { return config_.fallback && config_.token_threshold <= 0; }
  // The distribution below a node, drafting it first if needed (false: the drafter had no
  // room).
  Result<bool> ensure_drafted(Drafter& drafter, const TokenTree& tree, int32_t node);
  const NodeDistribution* dist_of(int32_t node) const;
  // The next candidate of a drafted node that is not a child yet (-1: none left).
  int next_candidate(const TokenTree& tree, int32_t node) const;
  // Adds a child and its confidence.
  void add_child(TokenTree* tree, int32_t parent, const TokenProb& tp);
  int32_t best_leaf(const TokenTree& tree) const;
  // The confidence the pacer paces by (EdgeLlmConfig::calibrated_pacer): of a node, and of
  // the branch its parent's candidate of rank `rank` would open.
  double pace_conf(int32_t node) const;
  double pace_conf(int32_t parent, int rank) const;
  // A leaf's confidence for the fallback's T_c: the raw product of draft probabilities (the
  // paper), or its calibrated chance under the most likely shape.
  double fallback_confidence(int32_t node) const;
  // The most nodes a tree may have at this context under kVerifySlack (max_nodes_ when the
  // profile has no data).
  int64_t affordable_nodes(int context) const;
  // The cost stop for the next step of a tree with `rows` rows (the root included).
  struct StepCost {
    bool active = false;
    double rate = 0;   // the tree's expected tokens per second so far
    double row = 0;    // seconds one more verification row adds
    double draft = 0;  // seconds of the draft pass a leaf not drafted yet needs
    // Whether adding a node of confidence `conf` (drafting its parent first when
    // `needs_draft`) keeps the cycle's expected tokens per second rising.
    bool pays(double conf, bool needs_draft) const {
      return !active || conf / (row + (needs_draft ? draft : 0)) > rate;
    }
  };
  // `hidden_draft`: the cycle's drafting hidden behind the target's read-ahead
  // (BuildContext::hidden_draft_seconds); a draft pass costs only what exceeds it.
  StepCost step_cost(int rows, int context, double hidden_draft) const;
  // The calibrated chance that the target picks a token of draft probability p below
  // `parent` (LEVER's calibration, learned from this builder's verified rows).
  double acceptance(int32_t parent, double p) const;

  EdgeLlmConfig config_;
  int max_nodes_;
  int max_depth_;
  const char* name_;
  double alpha_;
  double last_tc_ = 1;  // T_c of the last tree when it went to verification
  // This cycle: confidence of each node (index node + 1; the root's is 1) and the known
  // distributions (has_dist_ by node + 1).
  std::vector<double> conf_;
  std::vector<NodeDistribution> dists_;
  std::vector<bool> has_dist_;
  int32_t anchor_ = TokenTree::kRoot;
  // This cycle: the calibrated chance that each node is reached (index node + 1).
  std::vector<double> reach_;
  double gain_ = 1;         // this cycle: 1 (the bonus token) + the sum of reach_ over nodes
  double draft_spent_ = 0;  // this cycle: seconds of draft passes so far
  double top_p_ = 0.5;      // running mean of the draft's top probability (a leaf's next step)
  // Tokens per second of draft + verification over recent cycles (0: none yet).
  static constexpr double kRateEma = 0.1;
  double realised_rate_ = 0;
  LatencyProfile profile_;
  AcceptanceCalibration calibration_;
  MeasuredSwitch lending_{/*first_on=*/true};  // whether provisional drafting pays on this session (lending first)
  // This cycle: the pending read-ahead when the build started, whether it began from
  // carried nodes (its drafting then says nothing about what lending could save), and
  // whether the switch was consulted. Over recent cycles (EMA): seconds of drafting past
  // the read-ahead, and seconds per cycle.
  double hidden_at_build_ = 0;
  bool built_from_carried_ = false;
  mutable bool switch_consulted_ = false;
  bool first_of_prompt_ = true;  // the first cycle drafts the whole prompt: not counted
  double exposed_draft_ema_ = 0, cycle_seconds_ema_ = 0;
  // EdgeLlmConfig::measured_size: the caps (the first: none) and the one this cycle runs.
  SizeCapSelector size_selector_;
  int size_arm_ = 0;
  bool uses_size_caps() const { return config_.measured_size && uses_alpha(); }
};

}  // namespace sf
