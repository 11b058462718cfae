// CatsAdapter: the small network CATS (and Kangaroo) put on a shallow hidden state so that
// the target's own LM head predicts the next token well from it (paper 4.3, after
// Kangaroo): two RMSNorms and one attention layer, the LM head shared with the target.
//
//   a   = RMSNorm(h) * attn_norm
//   x   = h + Wo . Attention(RoPE(Wq a), RoPE(Wk a), Wv a)    (its own KV cache)
//   y   = RMSNorm(x) * out_norm
//   logits = target LM head (target final norm, then the head) applied to y
//
// Attention has the target's head layout (n_head, n_head_kv, head_dim) and normal-mode
// RoPE at the target's base. Initialised with Wo = 0 and out_norm = 1 it is exactly the
// plain early-exit head (RMSNorm is idempotent up to eps), so training starts from "no
// adapter" and held-out agreement before/after says what it adds.
//
// The adapter keeps K/V for every committed cell (filled at prefill and by every pass that
// runs its layer), and commits/rolls back with the target's cache. Files: GGUF with
// general.architecture = "specflash-cats-adapter", the target's fingerprint, the role and
// the layer it reads. Not thread-safe; uses the ThreadPool given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/forward_batch.h"
#include "model/model.h"

namespace sf {

enum class AdapterRole { kDraft, kVerifier };
const char* adapter_role_name(AdapterRole role);

// Shape and offsets of the flat f32 parameter vector (matrices in GGUF row order: one row
// per output): attn_norm [E], wq [q_dim, E], wk [kv_dim, E], wv [kv_dim, E], wo [E, q_dim],
// out_norm [E].
struct AdapterLayout {
  int n_embd = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  int q_dim() const { return n_head * head_dim; }
  int kv_dim() const { return n_head_kv * head_dim; }
  int64_t attn_norm() const { return 0; }
  int64_t wq() const { return n_embd; }
  int64_t wk() const { return wq() + static_cast<int64_t>(q_dim()) * n_embd; }
  int64_t wv() const { return wk() + static_cast<int64_t>(kv_dim()) * n_embd; }
  int64_t wo() const { return wv() + static_cast<int64_t>(kv_dim()) * n_embd; }
  int64_t out_norm() const { return wo() + static_cast<int64_t>(n_embd) * q_dim(); }
  int64_t total() const { return out_norm() + n_embd; }

  static AdapterLayout for_model(const Model& target);
};

// Initial parameters: norms 1, Wq/Wk/Wv ~ N(0, 0.02), Wo = 0 (the plain exit head).
std::vector<float> init_adapter_params(const AdapterLayout& layout, uint64_t seed);

Status save_adapter(const std::string& path, const Model& target, AdapterRole role, int layer,
                    const std::vector<float>& params);

// The layer an adapter file reads (to default --cats-ldm / --cats-lsv to it).
Result<int> adapter_file_layer(const std::string& path);

class CatsAdapter {
 public:
  // Errors: not an adapter, trained for another model, another role, or another layer
  // (the message says which --cats-* flag or retraining fixes it).
  static Result<std::unique_ptr<CatsAdapter>> load(const std::string& path, const Model& target, AdapterRole role,
                                                   int layer, int n_ctx, ThreadPool& pool);
  // An adapter from parameters in memory (tests, the trainer's evaluation).
  CatsAdapter(const AdapterLayout& layout, std::vector<float> params, int layer, int n_ctx, ThreadPool& pool);

  int layer() const { return layer_; }
  int n_past() const { return n_past_; }
  // Weights + KV cache.
  uint64_t resident_bytes() const;
  static uint64_t resident_bytes_for(const AdapterLayout& layout, int n_ctx);

  // Rows of `batch` with their hidden states h [n, E] (after the adapter's layer): writes
  // their K/V into the batch's cells and, if out is not null, y [n, E] (the input of the
  // target's LM head).
  void forward(const ForwardBatch& batch, const float* hidden, float* out);
  // As ModelRunner::commit / truncate: keeps cells[i] at n_past + i.
  void commit(const std::vector<int32_t>& cells);
  void truncate(int n);

 private:
  AdapterLayout layout_;
  std::vector<float> params_;
  int layer_ = 0;
  int n_ctx_ = 0;
  int n_past_ = 0;
  ThreadPool& pool_;
  std::vector<float> k_cache_, v_cache_;  // [n_ctx, kv_dim] each, RoPE applied to K
  std::vector<float> a_, q_, k_, v_, att_, o_, rstd_;
};

}  // namespace sf
