// HybridDrafter: a draft model and a retrieval drafter proposing into one tree (the idea of
// SAM-Decoding's hybrid; CoordGen has no draft model). Both drafters see every node the tree
// builder drafts; a node's distribution merges the two, each token worth the larger of its
// two probabilities (a retrieved continuation the model doubts keeps its retrieval weight,
// and the model's own guesses stay where retrieval has none). The tree builder shapes the
// tree as usual, so children are chosen deterministically from the merged candidates and
// verification stays lossless (the verifier treats each child as a one-hot draft).
// The model drafter's own row limits apply: once it has no room left in a cycle, the
// remaining nodes get the retrieval distribution alone.
// `--spec auto` drafts from one source at a time (set_sources): its arms are policies over
// the draft model or over retrieval. The draft model follows every commit (its commit only
// records the tokens; it runs them at its next draft, the catch-up auto charges for). The
// retrieval drafter is told of a cycle only when it drafts in it: its commit extends a suffix
// automaton per token, ~0.5 us that auto paid on every plain-decoding token at a 100% budget
// on stories260K (a 25 us step). When it drafts again it begins that cycle with the whole
// history and extends its automaton by the tokens it missed (RetrievalDrafter::begin_cycle).
// Not thread-safe.
#pragma once

#include <memory>

#include "spec/drafter.h"

namespace sf {

class HybridDrafter : public Drafter {
 public:
  HybridDrafter(std::unique_ptr<Drafter> model, std::unique_ptr<Drafter> retrieval);

  const char* name() const override { return "hybrid"; }
  uint64_t resident_bytes() const override;
  const DraftCounters& draft_counters() const override { return counters_; }
  size_t pending_tokens() const override { return model_->pending_tokens(); }
  void reset(const std::vector<int32_t>& prompt) override;
  Status begin_cycle(const std::vector<int32_t>& history, const SamplingParams& sampling,
                     const Sampler& draft_sampler) override;
  Status draft(const TokenTree& tree, const std::vector<int32_t>& nodes, std::vector<NodeDistribution>* out) override;
  void commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) override;
  // Drafting ahead is the draft model's (auto's EdgeLLM arm lends it the target's I/O waits
  // with the model as the only source): the gate, the threads and the carried work are its.
  void set_compute_gate(ComputeGate* gate) override { model_->set_compute_gate(gate); }
  void set_thread_pool(ThreadPool* pool) override { model_->set_thread_pool(pool); }
  bool drafted(int32_t node) const override { return model_->drafted(node); }
  // Only in a cycle retrieval did not draft in: a carried tree holds the model's work alone,
  // and the retrieval drafter would have to be told of the commit besides (false: the
  // caller commits as usual).
  bool commit_carry(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus_node,
                    const TokenTree& next, const std::vector<int32_t>& old_of_new) override;

  int prefill_top_k() const override { return retrieval_->prefill_top_k(); }
  void observe_prefill(const std::vector<int32_t>& prompt, size_t first,
                       const std::vector<std::vector<TokenProb>>& rows) override;
  // Only in a cycle the retrieval drafter drafted in (see above): the target's predictions
  // at rejected nodes cost an LM-head row each, and auto's model arms would pay for them on
  // every cycle for the retrieval arm's benefit.
  bool wants_rejected_predictions() const override {
    return retrieval_began_ && retrieval_->wants_rejected_predictions();
  }
  void observe_rejected(const TokenTree& tree, const std::vector<int32_t>& accepted,
                        const std::function<int32_t(int32_t node)>& target_argmax) override;
  double reuse_tokens_per_rejected_row() const override {
    return use_retrieval_ ? retrieval_->reuse_tokens_per_rejected_row() : 0;
  }
  Status end_sequence(const std::vector<int32_t>& sequence, size_t prompt_tokens) override {
    return retrieval_->end_sequence(sequence, prompt_tokens);
  }

  // Which sources draft() asks (both by default; at least one). Either can take over at
  // any cycle (set between begin_cycle and commit, as auto's builder does, or between
  // cycles).
  void set_sources(bool model, bool retrieval);
  // The tree retrieval drafted this cycle was discarded before verification (auto's look
  // at what the context offers): the retrieval drafter is not told of this cycle's commit
  // (it catches up when it drafts again) and no rejected predictions are asked for it.
  void forget_retrieval_cycle() { retrieval_began_ = false; }
  bool drafts_from_model() const { return use_model_; }
  bool drafts_from_retrieval() const { return use_retrieval_; }

  Drafter& model() { return *model_; }
  Drafter& retrieval() { return *retrieval_; }

 private:
  std::unique_ptr<Drafter> model_;
  std::unique_ptr<Drafter> retrieval_;
  bool model_full_ = false;  // the model drafter returned fewer rows this cycle
  bool use_model_ = true, use_retrieval_ = true;
  DraftCounters counters_;
  // The cycle begun (begin_cycle's arguments, which the caller keeps until commit), for a
  // retrieval drafter that starts the cycle only when first asked to draft.
  struct Cycle {
    const std::vector<int32_t>* history = nullptr;
    const SamplingParams* sampling = nullptr;
    const Sampler* draft_sampler = nullptr;
  };
  Cycle cycle_;
  bool retrieval_began_ = false;          // the retrieval drafter began this cycle
  bool retrieval_reset_pending_ = false;  // it has not seen the current sequence's reset
  Status begin_retrieval_cycle();
  // The reset deferred while retrieval was off, with the sequence as its prompt.
  void reset_retrieval_if_pending(const std::vector<int32_t>& sequence);
};

// Merges two distributions: each token at the larger of its probabilities, sorted by
// descending probability (ties by ascending id).
NodeDistribution merge_max(const NodeDistribution& a, const NodeDistribution& b);

}  // namespace sf
