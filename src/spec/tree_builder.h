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
#include "spec/cycle_stats.h"
#include "spec/drafter.h"
#include "spec/latency_profile.h"
#include "spec/spec_config.h"
#include "spec/token_tree.h"

namespace sf {

struct BuildContext {
  int64_t max_nodes = 0;  // what the context allows (and any other limit)
  int context = 0;        // committed tokens (the latency profile's context bucket)
  SamplingParams sampling;
  Sampler* draft_sampler = nullptr;  // i.i.d. drafts draw from it
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
  // Builders that estimate verification cost share the session's profile.
  virtual LatencyProfile* latency_profile() { return nullptr; }
};

// Adds children below `parent` from its distribution: the top `width` tokens
// (deterministic children) or, with i.i.d. drafting, `width` samples (duplicates are one
// node; the samples and q are recorded for lossless verification). Also records the
// candidate set (the first kCandidateSet tokens of the distribution).
constexpr int kCandidateSet = 8;
void add_top_children(TokenTree* tree, int32_t parent, const NodeDistribution& dist, int width);
void add_sampled_children(TokenTree* tree, int32_t parent, NodeDistribution dist, int width, Sampler& sampler);
void record_candidates(TokenTree* tree, int32_t parent, const NodeDistribution& dist);

// The builder a SpecConfig names.
std::unique_ptr<TreeBuilder> make_tree_builder(const SpecConfig& config);

}  // namespace sf
