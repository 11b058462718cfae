// Transformer: runs the decoder layer program of llama/qwen2/qwen3 over a ForwardBatch.
//
// The pass is split so callers can run any layer range and read the hidden state between
// layers (the early-exit tap that speculative policies use):
//   embed(tokens) -> hidden;  run_layers(batch, begin, end, hidden);  logits(hidden rows)
// hidden is [n_tokens, n_embd] f32, owned by the caller.
//
// Owns scratch buffers sized for the largest batch seen; one Transformer per concurrent
// sequence. Not thread-safe; uses the ThreadPool for parallel work.
#pragma once

#include <cstdint>
#include <vector>

#include "base/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/hparams.h"
#include "model/layer_source.h"
#include "model/model_weights.h"

namespace sf {

class Transformer {
 public:
  Transformer(const ModelHParams& hp, ThreadPool& pool) : hp_(hp), pool_(&pool) {}
  // The pool later calls compute on (a draft drafting ahead on its own thread while the
  // target's pool runs a pass). Set only between calls.
  void set_pool(ThreadPool& pool) { pool_ = &pool; }

  void embed(const ModelWeights& w, const int32_t* tokens, int64_t n, float* hidden) const;

  // One decoder layer, in place on hidden. Writes the batch rows' K/V into `cache`.
  void run_layer(const LayerWeights& layer, int layer_index, const float* rope_freqs, const ForwardBatch& batch,
                 KvCache& cache, float* hidden);

  // Layers [begin, end), weights from `source` (resident or streamed). Fails only when the
  // source does (an I/O error while streaming).
  Status run_layers(LayerSource& source, const ModelWeights& w, const ForwardBatch& batch, int begin, int end,
                    KvCache& cache, float* hidden);
  // Final RMSNorm + LM head for n_rows rows of hidden: logits [n_rows, n_vocab].
  Status logits(LayerSource& source, const ModelWeights& w, const float* hidden, int64_t n_rows, float* logits);

  // Final RMSNorm + the given LM head matrix (already acquired by the caller).
  void apply_head(const WeightMatrix& head, const ModelWeights& w, const float* hidden, int64_t n_rows, float* logits);

  // The same over fully resident weights (SF_CHECKed); cannot fail.
  void run_layers(const ModelWeights& w, const ForwardBatch& batch, int begin, int end, KvCache& cache, float* hidden);
  void logits(const ModelWeights& w, const float* hidden, int64_t n_rows, float* logits);

  const ModelHParams& hparams() const { return hp_; }

  // Upper bound of the scratch memory for batches of up to max_batch rows.
  static uint64_t scratch_bytes(const ModelHParams& hp, int64_t max_batch);

 private:
  void reserve(int64_t n_tokens);

  const ModelHParams& hp_;
  ThreadPool* pool_;
  MatmulScratch matmul_scratch_;
  int64_t capacity_ = 0;
  std::vector<float> xb_;         // [n, n_embd] normalised input of a block
  std::vector<float> q_, attn_;   // [n, q_dim]
  std::vector<float> k_, v_;      // [n, kv_dim]
  std::vector<float> gate_, up_;  // [n, n_ff]
  std::vector<float> delta_;      // [n, n_embd] block output before the residual add
};

}  // namespace sf
