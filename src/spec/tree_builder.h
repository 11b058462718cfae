// TreeBuilder: decides the shape of each draft tree. It asks a Drafter for the candidate
// distributions of the nodes it chooses (frontier drafting, drafter.h) and adds the
// children it wants; what it sees of past cycles comes through observe().
//
// Builders: StaticTreeBuilder (chain and fixed-width trees: SpecInfer-style),
// FrontierTreeBuilder (OPT-Tree's fixed node budget, and LEVER's gain/cost trees).
// Verification-time pruning (LEVER 4.3) is separate: tree_pruner.h.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "sampling/sampler.h"
#include "spec/acceptance_calibration.h"
#include "spec/cycle_stats.h"
#include "spec/drafter.h"
#include "spec/latency_profile.h"
#include "spec/spec_config.h"
#include "spec/token_tree.h"

namespace sf {

// Draft work done ahead of a cycle and confirmed by the last verification (EdgeLLM's
// provisional tokens): a tree below the new root whose `drafted` nodes (kRoot: the root
// itself) the drafter has already run, with their distributions. The drafter knows them
// as drafted (Drafter::commit_carry), so a builder must not draft them again.
struct CarriedDrafts {
  TokenTree tree;
  std::vector<int32_t> drafted;
  std::vector<NodeDistribution> dists;  // one per drafted node
};

struct BuildContext {
  int64_t max_nodes = 0;  // what the context allows (and any other limit)
  int context = 0;        // committed tokens (the latency profile's context bucket)
  SamplingParams sampling;
  Sampler* draft_sampler = nullptr;  // i.i.d. drafts draw from it
  // Seconds of the target's next-pass I/O still to come when this cycle starts drafting
  // (the streamer's read-ahead in flight; 0 when the target is resident): drafting up to
  // this long is hidden behind it, not added to the cycle (EdgeLLM's cost stop counts only
  // the rest).
  double hidden_draft_seconds = 0;
  // Work carried from the last cycle; only given to builders that accept it.
  const CarriedDrafts* carried = nullptr;
};

class TreeBuilder {
 public:
  virtual ~TreeBuilder() = default;
  virtual const char* name() const = 0;
  // Clears `tree` and builds this cycle's tree below the root (drafter.begin_cycle done).
  virtual Status build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) = 0;
  // After verification: what the cycle did and what the target chose on visited rows.
  virtual void observe(const TokenTree& tree, const CycleStats& stats) {
    (void)tree;
    (void)stats;
  }
  // A new prompt starts (after the drafter's reset): what the builder learnt about the last
  // text may not hold for this one.
  virtual void begin_generation() {}
  // Builders that estimate verification cost share the session's profile.
  virtual LatencyProfile* latency_profile() { return nullptr; }
  // Builders that calibrate the draft's probabilities against what the target accepts
  // (LEVER): any verified tree whose nodes carry candidate sets teaches it, whoever built it.
  virtual AcceptanceCalibration* acceptance_calibration() { return nullptr; }
  // Drafting during verification (EdgeLLM's provisional generation): the leaf of the last
  // built tree below which a background worker should keep drafting, and its distribution
  // when the builder already drafted it (else nullptr). False: the builder wants none.
  virtual bool provisional_anchor(int32_t* leaf, const NodeDistribution** dist) const {
    (void)leaf, (void)dist;
    return false;
  }
  // The policy that built the last tree: the builder itself, or for a builder that
  // delegates (auto), the one it chose. Valid for the builder's lifetime.
  virtual const char* policy() const { return name(); }
  // Whether the session's pruner (LEVER's early exit) may prune the last built tree.
  virtual bool wants_pruning() const { return true; }
  // Whether build() accepts BuildContext::carried.
  virtual bool accepts_carried() const { return false; }
  // Mirror-SD: whether the session should draft rollouts of the next window beside the
  // verification of the last built tree (mirror_rollout.h), where it can.
  virtual bool wants_parallel_rollouts() const { return false; }
  // The verification threshold the builder used for the last tree (EdgeLLM's alpha), for
  // the statistics; negative when it has none.
  virtual double threshold() const { return -1; }
};

// Adds children below `parent` from its distribution: the top `width` tokens
// (deterministic children) or, with i.i.d. drafting, `width` samples (duplicates are one
// node; the samples and q are recorded for lossless verification). Also records the
// candidate set (the first kCandidateSet tokens of the distribution).
constexpr int kCandidateSet = 8;
void add_top_children(TokenTree* tree, int32_t parent, const NodeDistribution& dist, int width);
void add_sampled_children(TokenTree* tree, int32_t parent, NodeDistribution dist, int width, Sampler& sampler);
void record_candidates(TokenTree* tree, int32_t parent, const NodeDistribution& dist);

// The builder a SpecConfig names. parallel_rollouts: the session can draft Mirror-SD's
// rollouts beside a verification pass (auto then has a mirror arm; auto_has_mirror_arm).
std::unique_ptr<TreeBuilder> make_tree_builder(const SpecConfig& config, bool parallel_rollouts = false);

}  // namespace sf
