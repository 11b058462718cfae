// Drafter: a source of candidate distributions for any node of a token tree (frontier
// drafting). Implementations: a separate draft model (draft_model_drafter.h); later the
// target's own shallow layers (self-speculation) and text retrieved from the context.
//
// A drafter does not decide the tree's shape: a TreeBuilder (tree_builder.h) asks it for
// the nodes it chooses, in the order it chooses, one at a time or as a batch of frontier
// nodes drafted together (one forward pass under a tree mask, LEVER 4.4 "batch-aware
// expansion"), and adds the children it wants.
//
// The protocol per cycle:
//   begin_cycle(history, sampling)          the committed sequence; the tree hangs below its
//                                           last token (the root, kRoot)
//   draft(tree, nodes, &dists) ...          any number of times; a node may be drafted once
//                                           its parent has been drafted
//   commit(tree, accepted, bonus)           the verified result: the accepted nodes and the
//                                           bonus token join the committed sequence
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "sampling/sampler.h"
#include "spec/token_tree.h"

namespace sf {

class ComputeGate;  // compute_gate.h

// The drafter's next-token distribution below one node, by descending probability (ties by
// ascending id). Greedy decoding: the softmax of the raw logits, truncated to the drafter's
// candidate limit. Sampling: the distribution after the sampler's processors (temperature,
// top-k/p, min-p, penalties) applied exactly as for the target, so that i.i.d. drafts can be
// verified losslessly; complete (every surviving token).
struct NodeDistribution {
  std::vector<TokenProb> probs;
};

// Time and size of the draft work, for latency models (LEVER's draft cost average).
struct DraftCounters {
  uint64_t passes = 0;  // draft forward passes (batches of frontier nodes)
  uint64_t rows = 0;    // rows in those passes
  double seconds = 0;   // wall time inside draft()
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual const char* name() const = 0;
  // Memory the drafter keeps resident (counted against the session's budget).
  virtual uint64_t resident_bytes() const = 0;
  // Starts a new sequence whose committed tokens are `prompt`.
  virtual void reset(const std::vector<int32_t>& prompt) = 0;
  // Starts a cycle; history is the committed sequence (its last token is the root).
  // draft_sampler applies the processors of `sampling` to the draft's logits.
  virtual Status begin_cycle(const std::vector<int32_t>& history, const SamplingParams& sampling,
                             const Sampler& draft_sampler) = 0;
  // Distributions below `nodes` (node ids of `tree`, kRoot for the root), one per node, in
  // order. Every node's parent must have been drafted in this cycle. Returns fewer entries
  // (possibly none) when the drafter has no room left (its context is full): the missing
  // nodes stay leaves.
  virtual Status draft(const TokenTree& tree, const std::vector<int32_t>& nodes,
                       std::vector<NodeDistribution>* out) = 0;
  virtual void commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) = 0;
  virtual const DraftCounters& draft_counters() const = 0;

  // Drafting ahead (EdgeLLM's provisional generation, Mirror-SD's rollouts). Optional; the
  // defaults mean "not supported".
  //
  // A gate that a model drafter waits at between layers, so that draft() called on a
  // background thread pauses while the target computes (nullptr: never wait). Set only
  // between draft() calls.
  virtual void set_compute_gate(ComputeGate* gate) { (void)gate; }
  // Like commit() when the target's bonus token is the token of `bonus_node`, a node the
  // drafter has already drafted (a child of the last accepted node). The drafter keeps its
  // work on the bonus node and on `next`, the subtree below it (tree.subtree_below(bonus_node,
  // &old_of_new)): in the next cycle the root counts as drafted and so do the nodes of
  // `next` that were drafted in `tree`. Returns false (and does nothing) when it cannot;
  // the caller then uses commit().
  virtual bool commit_carry(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus_node,
                            const TokenTree& next, const std::vector<int32_t>& old_of_new) {
    (void)tree, (void)accepted, (void)bonus_node, (void)next, (void)old_of_new;
    return false;
  }
  // Whether `node` of the current cycle's tree has been drafted (kRoot: the root).
  virtual bool drafted(int32_t node) const {
    (void)node;
    return false;
  }
};

}  // namespace sf
