// ModelRunner: one model with its KV cache and forward pass, as the speculative core sees
// both the target and a draft model: run a batch (causal or a token tree), read logits of
// chosen rows, then commit the rows that were accepted and forget the rest.
//
// Cells [0, n_past) of the cache hold the committed sequence; a batch writes its rows into
// the cells its ForwardBatch names (by convention n_past onwards). commit() moves the
// accepted rows' cells into place after n_past in one step.
// Not thread-safe.
#pragma once

#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/layer_source.h"
#include "model/model.h"
#include "model/transformer.h"

namespace sf {

struct RunnerCounters {
  uint64_t forward_passes = 0;
  uint64_t rows = 0;
  uint64_t head_rows = 0;
  double forward_seconds = 0;
};

class ModelRunner {
 public:
  ModelRunner(const Model& model, LayerSource& source, ThreadPool& pool, int n_ctx);

  const Model& model() const { return model_; }
  const ModelHParams& hparams() const { return model_.hparams(); }
  int n_ctx() const { return cache_.n_ctx(); }
  int n_past() const { return n_past_; }
  const RunnerCounters& counters() const { return counters_; }

  // Forgets everything (n_past = 0).
  void reset() { truncate(0); }
  // Keeps only the first n committed cells.
  void truncate(int n);
  // The tokens whose K/V the committed cells hold, in order (size n_past()).
  const std::vector<int32_t>& committed_tokens() const { return tokens_; }

  // Runs all layers over the batch; its hidden states stay available for logits().
  Status forward(const ForwardBatch& batch);
  // Convenience: forward a causal batch of tokens at n_past and commit all of them.
  Status forward_causal(const std::vector<int32_t>& tokens);

  // Logits of rows of the last forward: all of them, or one at a time between
  // begin_head()/end_head() (the head is acquired once, so a streamed head is read once).
  Status logits_all(float* out);
  Status begin_head();
  void row_logits(int64_t row, float* out);
  void end_head();

  // Keeps the given cells (in order) as the sequence continuation: cell cells[i] moves to
  // n_past + i, then n_past grows by cells.size(). tokens[i] is the token in cells[i].
  void commit(const std::vector<int32_t>& cells, const std::vector<int32_t>& tokens);

 private:
  const Model& model_;
  LayerSource& source_;
  Transformer transformer_;
  KvCache cache_;
  std::vector<float> hidden_;  // [rows of the last forward, n_embd]
  int64_t hidden_rows_ = 0;
  const WeightMatrix* head_ = nullptr;
  int n_past_ = 0;
  std::vector<int32_t> tokens_;  // committed tokens, one per cell < n_past_
  RunnerCounters counters_;
};

}  // namespace sf
