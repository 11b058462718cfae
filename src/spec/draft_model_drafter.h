// DraftModelDrafter: candidate distributions from a small draft model that shares the
// target's vocabulary (checked at creation: a mismatch is an error, because a draft token
// id must mean the same text to the target).
//
// The draft keeps its own KV cache. Tokens committed to the sequence but not yet seen by
// the draft are `pending`; drafting the root first runs them causally (the root's
// distribution is the last row's). Drafting other nodes runs them as one batch at fresh
// cells after the committed ones, each row attending to the committed prefix and its own
// ancestors (whose cells were written when they were drafted). Leaves are never run.
// commit() keeps the draft cells of the accepted path and queues the rest of the accepted
// tokens and the bonus token as pending. commit_carry() also keeps the cells of a drafted
// bonus node and of the drafted subtree below it (moved right after the committed cells),
// so the next cycle starts with that work done.
// Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/layer_source.h"
#include "model/model.h"
#include "sampling/sampler.h"
#include "spec/drafter.h"
#include "spec/gated_layer_source.h"
#include "spec/model_runner.h"
#include "spec/token_tree.h"
#include "tokenizer/tokenizer.h"

namespace sf {

class DraftModelDrafter : public Drafter {
 public:
  // Greedy distributions keep this many top tokens (the candidate sets of tree builders).
  static constexpr int kGreedyCandidates = 32;

  // Loads the draft fully resident. target_vocab: the target's tokenizer.
  static Result<std::unique_ptr<DraftModelDrafter>> create(const std::string& path, const Tokenizer& target_vocab,
                                                           int target_n_vocab, ThreadPool& pool, int n_ctx);

  // Another drafter over the same draft weights (shared, read-only) with its own KV cache,
  // for another sequence: only the cache and scratch are new memory.
  std::unique_ptr<DraftModelDrafter> fork(ThreadPool& pool, int n_ctx) const;

  const char* name() const override { return "draft-model"; }
  const Model& model() const { return *model_; }
  uint64_t resident_bytes() const override { return model_->weights().resident_bytes(); }
  const RunnerCounters& counters() const { return runner_->counters(); }
  const DraftCounters& draft_counters() const override { return draft_counters_; }
  size_t pending_tokens() const override { return carry_pending_ ? 0 : pending_.size(); }

  void reset(const std::vector<int32_t>& prompt) override;
  Status begin_cycle(const std::vector<int32_t>& history, const SamplingParams& sampling,
                     const Sampler& draft_sampler) override;
  Status draft(const TokenTree& tree, const std::vector<int32_t>& nodes, std::vector<NodeDistribution>* out) override;
  void commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) override;
  void set_compute_gate(ComputeGate* gate) override { gated_->set_gate(gate); }
  void set_thread_pool(ThreadPool* pool) override { runner_->set_pool(pool ? *pool : *home_pool_); }
  bool commit_carry(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus_node,
                    const TokenTree& next, const std::vector<int32_t>& old_of_new) override;
  bool drafted(int32_t node) const override;

 private:
  DraftModelDrafter() = default;
  // The distribution below `node` from its logits row.
  NodeDistribution distribution(const TokenTree& tree, int32_t node, const float* logits) const;
  Status draft_root(std::vector<NodeDistribution>* out);

  std::shared_ptr<const Model> model_;  // shared by forks
  std::unique_ptr<ResidentLayerSource> source_;
  std::unique_ptr<GatedLayerSource> gated_;  // over source_: pauses a background draft
  std::unique_ptr<ModelRunner> runner_;
  ThreadPool* home_pool_ = nullptr;  // the pool it was created with
  std::vector<int32_t> pending_;
  // This cycle: draft cache cell of each node (-1: not run), the next free cell, whether
  // the root was drafted, and the sampling setup.
  std::vector<int32_t> node_cell_;
  int32_t next_cell_ = 0;
  bool root_drafted_ = false;
  const std::vector<int32_t>* history_ = nullptr;
  SamplingParams sampling_;
  const Sampler* draft_sampler_ = nullptr;
  std::vector<float> logits_;
  DraftCounters draft_counters_;
  // Set by commit_carry(), installed by the next begin_cycle(): the carried nodes' cells.
  bool carry_pending_ = false;
  std::vector<int32_t> carry_cells_;
};

}  // namespace sf
