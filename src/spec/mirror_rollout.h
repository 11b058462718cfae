// Mirror-SD (Bhendawade et al., sections 3.1 and 3.4): drafting the next window in
// parallel with the target's verification pass.
//
// At the early-exit layer l_e of the verification pass (a LayerTap), the token channel
// takes the target's own top tokens and log-probabilities of every verified row from the
// logit lens (final norm + LM head on the hidden state; the head is kept resident). From
// them the roots of the hypothesis tree are chosen: for every node u of the draft tree
// (the root included) and every channel token v at u's row that is not already a child of
// u (a rejected child is never the correction), the channel's estimate that the accepted
// path ends at u with correction v is
//   P(u, v) = prod over the path to u of p_le(child | parent row) * p_le(v | u's row);
// the kappa best (u, v) pairs are the candidates. A background worker drafts a
// branch-complete rollout below each candidate (a chain of gamma tokens; the branches
// advance together, one draft pass per depth) on the draft's own threads while the target
// computes layers l_e+1..N and walks the tree.
//
// Reuse rule (paper 3.1): when the corrected prefix (the accepted path plus the bonus
// token) is a path of the hypothesis tree, i.e. the accepted path ends at some candidate's
// anchor u and the bonus token is that candidate, the drafter keeps its work on the
// candidate's rollout (Drafter::commit_carry) and the next window starts from it
// (CarriedDrafts). Otherwise the next window is drafted afresh: a fallback.
//
// Time box: the worker does not start a rollout step that its measured step time says
// would end after the measured overlap (the time from the channel to the end of the
// verification in recent cycles); the first step (candidates' first draft pass) always
// runs. Stopped rollouts only shorten the carried window; the builder drafts the rest.
//
// Placement: the target runs on its ThreadPool, the draft on its own pool (a separate
// thread group), driven by the worker thread. The drafter sees only the Drafter interface
// and the target only a LayerTap, so either side could move to an accelerator backend.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/background_worker.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"
#include "ops/matmul.h"
#include "sampling/sampler.h"
#include "spec/cycle_stats.h"
#include "spec/drafter.h"
#include "spec/model_runner.h"
#include "spec/spec_config.h"
#include "spec/token_tree.h"
#include "spec/tree_builder.h"

namespace sf {

// A sample from `dist` (probabilities summing to ~1) with the uniform hash(seed, position):
// the same position and distribution always give the same token.
int32_t keyed_draw(const std::vector<TokenProb>& dist, uint64_t seed, int64_t position);
// The seed of Mirror-SD's draft draws for a generation (independent of the target's).
uint64_t mirror_draft_seed(const SamplingParams& sampling);

// The layer the channel taps for a config and target depth (clamped to 1..n_layer-1).
int mirror_exit_layer(const MirrorConfig& config, int n_layer);
// Placement on CPU threads: the draft gets `draft_threads` (or a quarter of the cores, at
// least one), the target the rest (at least one).
struct MirrorPlacement {
  int target_threads = 1;
  int draft_threads = 1;
};
MirrorPlacement mirror_placement(int n_threads, int draft_threads);
// Whether `--spec auto` has a mirror arm on this many threads: only where the target keeps at
// least 3 threads beside the draft's (4 cores with the default split). Measured on this
// project's 2-core machine, where the split leaves the target one core: with the arm, auto
// ran 3-5% slower at budgets of 0-50% on stories260K + its draft (five paired A/Bs; Mirror-SD
// alone is below the best method in nearly every report row there), its exploration and its
// noisy leads costing more than its rollouts gain (docs/auto.md).
bool auto_has_mirror_arm(int n_threads, int draft_threads);

// The token channel: top-k tokens with log-probabilities of the logit lens, per row.
class TokenChannel {
 public:
  TokenChannel(const Model& target, ThreadPool& pool) : model_(target), pool_(pool) {}
  // hidden: [n_rows, n_embd] at the exit layer; keeps the `k` best tokens of each row.
  void compute(const float* hidden, int64_t n_rows, int k);
  int64_t rows() const { return static_cast<int64_t>(top_.size()); }
  // Row r's top tokens by descending log-probability (TokenProb::p holds the log-prob).
  const std::vector<TokenProb>& top(int64_t row) const { return top_[static_cast<size_t>(row)]; }
  // Any token's log-probability at row r.
  double log_prob(int64_t row, int32_t token) const;

 private:
  const Model& model_;
  ThreadPool& pool_;
  MatmulScratch scratch_;
  std::vector<float> normed_, logits_;
  std::vector<std::vector<TokenProb>> top_;
  std::vector<float> log_z_;
  int64_t n_vocab_ = 0;
};

// The hypothesis tree's roots: up to kappa (anchor node, token) pairs by descending
// channel estimate P(u, v) (see above); anchors are nodes of `tree` or kRoot.
struct RolloutCandidate {
  int32_t anchor = TokenTree::kRoot;
  int32_t token = 0;
  double log_score = 0;
};
std::vector<RolloutCandidate> choose_candidates(const TokenTree& tree, const TokenChannel& channel, int kappa);

struct RolloutJob {
  TokenTree tree;                   // in: the tree under verification; out: with the candidates and their chains
  std::vector<int32_t> candidates;  // nodes of `tree` (children of their anchors)
  int gamma = 4;                    // rollout depth below each candidate
  bool greedy = true;
  uint64_t seed = 0;          // keyed_draw's seed
  int64_t root_position = 0;  // sequence position of the tree's root
  double time_box = 0;        // seconds after the start by which a step must end (<= 0: none)
  double step_estimate = 0;   // measured seconds per rollout step
  // Out: drafted nodes (leaf anchors, the candidates, chain nodes) with
  // their distributions, tokens added below candidates, steps, drafting time, status.
  std::vector<int32_t> drafted;
  std::vector<NodeDistribution> dists;
  int tokens = 0;
  int steps = 0;
  double first_step_seconds = 0;
  double draft_seconds = 0;
  Status status;
};

// The worker's loop (background thread): drafts until gamma deep, stopped, or time-boxed.
void run_rollouts(Drafter& drafter, const std::atomic<bool>& stop, RolloutJob* job);

// After verification: applies the reuse rule. Returns the rollout tokens carried (0 on a
// fallback); *committed says whether the drafter was committed (else the caller commits
// it on job.tree as usual).
int carry_rollout(Drafter& drafter, const RolloutJob& job, const std::vector<int32_t>& accepted, int32_t bonus,
                  CarriedDrafts* carried, bool* committed);

// Mirror-SD's part of one decode cycle, owned by the session (its estimates persist). Use:
//   begin(...)            before the verification pass; pass tap() to the forward
//   finish(...)           after the acceptance walk and the target's commit
// The destructor and finish() stop the worker on every path.
class MirrorSpeculation {
 public:
  MirrorSpeculation(const Model& target, ThreadPool& target_pool, BackgroundWorker& worker, int exit_layer, int kappa,
                    int gamma)
      : channel_(target, target_pool), worker_(worker), exit_layer_(exit_layer), kappa_(kappa), gamma_(gamma) {}
  ~MirrorSpeculation() { stop(); }
  // Stops the worker if it runs (an error path of the cycle); idempotent.
  void abort() { stop(); }
  int exit_layer() const { return exit_layer_; }
  int kappa() const { return kappa_; }

  void begin(Drafter& drafter, const TokenTree& tree, const SamplingParams& sampling, int64_t root_position);
  const LayerTap* tap() const { return &tap_; }
  bool launched() const { return launched_; }
  // The tree the drafter drafted this cycle (commit the drafter on it).
  const TokenTree& drafted_tree() const { return job_.tree; }
  // Stops the rollouts, applies the reuse rule and fills the cycle's Mirror-SD fields
  // (pass: the verification pass's timing).
  Status finish(Drafter& drafter, const PassTiming& pass, const std::vector<int32_t>& accepted, int32_t bonus,
                CarriedDrafts* carried, bool* committed, CycleStats* cycle);

 private:
  void stop();

  TokenChannel channel_;
  BackgroundWorker& worker_;
  int exit_layer_;
  int kappa_;
  int gamma_;
  LayerTap tap_;
  RolloutJob job_;
  std::atomic<bool> stop_{false};
  bool launched_ = false;
  double launched_at_ = 0;
  // Measured: the overlap (channel to end of verification) and the time per rollout step.
  double overlap_estimate_ = 0;
  double step_estimate_ = 0;
};

// Ends a cycle's rollouts on every path out of the decode loop (errors included).
class MirrorCycleGuard {
 public:
  explicit MirrorCycleGuard(MirrorSpeculation* mirror) : mirror_(mirror) {}
  ~MirrorCycleGuard() {
    if (mirror_) mirror_->abort();
  }
  MirrorCycleGuard(const MirrorCycleGuard&) = delete;
  MirrorCycleGuard& operator=(const MirrorCycleGuard&) = delete;

 private:
  MirrorSpeculation* mirror_;
};

// Adds a cycle's Mirror-SD fields to the generation's totals (T per eq. 10: the fresh
// draft of a fallback, T_prefix, the channel, then max(T_suffix, T_draft)).
void add_mirror_stats(const CycleStats& cycle, SpecStats* stats);

}  // namespace sf
