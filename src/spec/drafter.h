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
#include <functional>
#include <vector>

#include "base/status.h"
#include "sampling/sampler.h"
#include "spec/token_tree.h"

namespace sf {

class ComputeGate;  // compute_gate.h
class ThreadPool;   // base/thread_pool.h

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
  // Catching up: the committed tokens the drafter had not run (a new prompt, tokens emitted
  // by plain decoding inside `auto`) that root drafts ran first, and the seconds those
  // root drafts took (a part of `seconds`).
  uint64_t catch_up_tokens = 0;
  double catch_up_seconds = 0;
};

// Whether the draft passes between two readings of a drafter's counters caught the draft
// model up on more tokens than a cycle of its own leaves behind (the bonus token and at most
// one accepted leaf it did not run): a new prompt, or what plain decoding or retrieval
// emitted inside `auto`. Such a root pass costs up to tens of draft steps, and LEVER's
// gain/cost trees, whose profile learnt it as the cost of a draft pass, came out small:
// inside `auto`, whose LEVER arm often runs right after a cycle of another source, its
// estimate of a pass stayed 2-20x a real one and its re-measuring cycles drafted 5 nodes
// instead of 12 (EMULATED scaled phone regime, stories260K at 0%; docs/auto.md). EdgeLLM's
// builder still learns them: skipping them there too cut the paced shape's trees from ~47
// to ~19 nodes at EMULATED 25 MB/s, for reasons not yet understood (docs/auto.md).
inline bool caught_up_beyond_a_cycle(const DraftCounters& before, const DraftCounters& after) {
  return after.catch_up_tokens - before.catch_up_tokens > 2;
}

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
  // Committed tokens the drafter has not run yet: its next root draft runs them first (the
  // catch-up that `auto` charges when it considers switching from plain decoding to a
  // drafting arm). 0 for drafters that keep no model state per token.
  virtual size_t pending_tokens() const { return 0; }

  // Drafting ahead (EdgeLLM's provisional generation, Mirror-SD's rollouts). Optional; the
  // defaults mean "not supported".
  //
  // A gate that a model drafter waits at between layers, so that draft() called on a
  // background thread pauses while the target computes (nullptr: never wait). Set only
  // between draft() calls.
  virtual void set_compute_gate(ComputeGate* gate) { (void)gate; }
  // The threads a model drafter computes on from now: `pool` (nullptr: the pool it was
  // created with). Drafting ahead runs on a background thread while the target's pool runs
  // the pass, so it needs threads of its own; between passes the drafter has the session's
  // pool. Set only between draft() calls.
  virtual void set_thread_pool(ThreadPool* pool) { (void)pool; }
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

  // Optional hooks for drafters that learn from the target's own work (retrieval drafting,
  // retrieval_drafter.h). The defaults ask for nothing and do nothing.
  //
  // Top tokens wanted per prompt position from the prefill's logits (0: none, and the
  // prefill computes no logits).
  virtual int prefill_top_k() const { return 0; }
  // After prefill (before begin_cycle): rows[i] holds the target's top tokens, by
  // descending probability, after prompt[first + i] (the positions the prefill computed).
  virtual void observe_prefill(const std::vector<int32_t>& prompt, size_t first,
                               const std::vector<std::vector<TokenProb>>& rows) {
    (void)prompt;
    (void)first;
    (void)rows;
  }
  // Whether observe_rejected() is wanted (it costs LM-head rows the verifier skipped).
  virtual bool wants_rejected_predictions() const { return false; }
  // After verification, before commit(): the accepted path, and the target's argmax at any
  // node's row (its prediction of the token after that node), computed on request.
  virtual void observe_rejected(const TokenTree& tree, const std::vector<int32_t>& accepted,
                                const std::function<int32_t(int32_t node)>& target_argmax) {
    (void)tree;
    (void)accepted;
    (void)target_argmax;
  }
  // What the target's prediction on a rejected draft row is worth in later cycles, in tokens
  // (a drafter that reuses rejected drafts, measured: tokens accepted that only the reuse
  // offered, per rejected row asked for). A tree builder that weighs rows by what they cost
  // counts it for the nodes it adds (frontier_tree_builder.h). 0: rows are worth only their
  // own acceptance.
  virtual double reuse_tokens_per_rejected_row() const { return 0; }
  // The generation ended; `sequence` is the prompt and everything committed after it.
  virtual Status end_sequence(const std::vector<int32_t>& sequence, size_t prompt_tokens) {
    (void)sequence;
    (void)prompt_tokens;
    return Status::Ok();
  }
};

}  // namespace sf
