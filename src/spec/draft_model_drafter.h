// DraftModelDrafter: proposes token trees with a small draft model that shares the
// target's vocabulary (checked at creation: a mismatch is an error, because a draft token
// id must mean the same text to the target).
//
// The draft keeps its own KV cache. Tokens committed to the sequence but not yet seen by
// the draft are `pending`; propose() first runs them, then expands the tree level by level
// (one draft forward pass per depth over that depth's nodes, with an ancestor mask).
// Leaves are not run. commit() keeps the draft cells of the accepted path and queues the
// rest of the accepted tokens and the bonus token as pending.
//
// Children per node: greedy decoding takes the draft's top-w tokens; sampling draws w
// i.i.d. samples from the draft distribution processed like the target's (duplicates are
// one node) and records the distribution and samples for lossless verification.
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
#include "spec/model_runner.h"
#include "spec/token_tree.h"
#include "tokenizer/tokenizer.h"

namespace sf {

class DraftModelDrafter : public Drafter {
 public:
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

  // Starts a new sequence whose committed tokens are `prompt`.
  void reset(const std::vector<int32_t>& prompt) override;
  Status propose(TreePolicy& policy, const SamplingParams& sampling, Sampler& draft_sampler,
                 const std::vector<int32_t>& history, TokenTree* tree) override;
  void commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) override;

 private:
  DraftModelDrafter() = default;
  // Adds the children of `parent` chosen from `logits`.
  void expand(const float* logits, int32_t parent, int width, const SamplingParams& sampling, Sampler& draft_sampler,
              const std::vector<int32_t>& history, TokenTree* tree);

  std::shared_ptr<const Model> model_;  // shared by forks
  std::unique_ptr<ResidentLayerSource> source_;
  std::unique_ptr<ModelRunner> runner_;
  std::vector<int32_t> pending_;
  std::vector<int32_t> node_cell_;  // draft cache cell of each node of the last tree (-1: not run)
  std::vector<float> logits_;
};

}  // namespace sf
