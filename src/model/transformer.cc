#include "model/transformer.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "base/fp16.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "quant/dequantize.h"

namespace sf {

void Transformer::reserve(int64_t n) {
  if (n <= capacity_) return;
  capacity_ = n;
  xb_.resize(n * hp_.n_embd);
  q_.resize(n * hp_.q_dim());
  attn_.resize(n * hp_.q_dim());
  k_.resize(n * hp_.kv_dim());
  v_.resize(n * hp_.kv_dim());
  gate_.resize(n * hp_.n_ff);
  up_.resize(n * hp_.n_ff);
  delta_.resize(n * hp_.n_embd);
}

uint64_t Transformer::scratch_bytes(const ModelHParams& hp, int64_t n) {
  const uint64_t floats =
      static_cast<uint64_t>(n) * (2ull * hp.n_embd + 2ull * hp.q_dim() + 2ull * hp.kv_dim() + 2ull * hp.n_ff);
  // Quantised activations: at most ~1.1 bytes per input element for the widest matmul; and
  // the tile kernels' own layout of them (the VNNI tiles: 1.25 bytes per element in panels
  // of 16 rows, see quant/vnni_q-inl.h; the row-panel kernels: 1.25 bytes per element per
  // row, quant/vnni_row_panels*-inl.h).
  const uint64_t widest = std::max(hp.n_embd, hp.n_ff);
  const uint64_t act = static_cast<uint64_t>(n) * widest * 2;
  const uint64_t prepared = (static_cast<uint64_t>(n) + 15) / 16 * 16 * widest * 5 / 4 + 64;
  return floats * sizeof(float) + act + prepared;
}

void Transformer::embed(const ModelWeights& w, const int32_t* tokens, int64_t n, float* hidden) const {
  for (int64_t i = 0; i < n; ++i) {
    SF_CHECK(tokens[i] >= 0 && tokens[i] < hp_.n_vocab, "token id %d out of range", tokens[i]);
    dequantize_row(w.token_embd.type, w.token_embd.row(tokens[i]), hidden + i * hp_.n_embd, hp_.n_embd);
  }
}

void Transformer::run_layer(const LayerWeights& L, int layer_index, const float* rope_freqs, const ForwardBatch& batch,
                            KvCache& cache, float* hidden) {
  const int64_t n = batch.size();
  reserve(n);
  const int E = hp_.n_embd, QD = hp_.q_dim(), KD = hp_.kv_dim(), HD = hp_.head_dim;

  // Attention block.
  for (int64_t t = 0; t < n; ++t) rms_norm(hidden + t * E, L.attn_norm, hp_.rms_eps, E, xb_.data() + t * E);
  matmul_shared_input({{&L.wq, q_.data(), QD}, {&L.wk, k_.data(), KD}, {&L.wv, v_.data(), KD}}, xb_.data(), n, E,
                      *pool_, matmul_scratch_);

  RopeParams rope{hp_.rope_mode, hp_.n_rot, hp_.rope_freq_base, hp_.rope_freq_scale, rope_freqs};
  std::vector<float> cs(hp_.n_rot);
  for (int64_t t = 0; t < n; ++t) {
    float* q = q_.data() + t * QD;
    float* k = k_.data() + t * KD;
    float* v = v_.data() + t * KD;
    if (L.bq) {
      for (int i = 0; i < QD; ++i) q[i] += L.bq[i];
      for (int i = 0; i < KD; ++i) k[i] += L.bk[i];
      for (int i = 0; i < KD; ++i) v[i] += L.bv[i];
    }
    if (L.q_norm) {
      for (int h = 0; h < hp_.n_head; ++h) rms_norm(q + h * HD, L.q_norm, hp_.rms_eps, HD, q + h * HD);
      for (int h = 0; h < hp_.n_head_kv; ++h) rms_norm(k + h * HD, L.k_norm, hp_.rms_eps, HD, k + h * HD);
    }
    rope_cos_sin(rope, batch.positions[t], cs.data());
    for (int h = 0; h < hp_.n_head; ++h) rope_apply(rope, cs.data(), q + h * HD);
    for (int h = 0; h < hp_.n_head_kv; ++h) rope_apply(rope, cs.data(), k + h * HD);
    const int cell = batch.kv_cells[t];
    SF_CHECK(cell >= 0 && cell < cache.n_ctx(), "kv cell %d outside the cache", cell);
    for (int h = 0; h < hp_.n_head_kv; ++h) {
      uint16_t* kc = cache.k(layer_index, h, cell);
      uint16_t* vc = cache.v(layer_index, h, cell);
      for (int i = 0; i < HD; ++i) {
        kc[i] = fp32_to_fp16(k[h * HD + i]);
        vc[i] = fp32_to_fp16(v[h * HD + i]);
      }
    }
  }
  SF_CHECK(batch.n_kv <= cache.n_ctx());
  AttentionShape shape{hp_.n_head, hp_.n_head_kv, HD, 1.0f / std::sqrt(static_cast<float>(HD))};
  attention(shape, q_.data(), n, cache.k(layer_index, 0, 0), cache.v(layer_index, 0, 0), {HD, cache.head_stride()},
            batch.n_kv, batch.mask.data(), attn_.data(), *pool_);
  matmul(L.wo, attn_.data(), n, QD, delta_.data(), E, *pool_, matmul_scratch_);
  for (int64_t i = 0; i < n * E; ++i) hidden[i] += delta_[i];

  // Feed-forward block (SwiGLU).
  for (int64_t t = 0; t < n; ++t) rms_norm(hidden + t * E, L.ffn_norm, hp_.rms_eps, E, xb_.data() + t * E);
  matmul_shared_input({{&L.ffn_gate, gate_.data(), hp_.n_ff}, {&L.ffn_up, up_.data(), hp_.n_ff}}, xb_.data(), n, E,
                      *pool_, matmul_scratch_);
  // Element-wise, so split freely between threads (an exp is a few dozen flops).
  pool_->parallel_for(
      n * hp_.n_ff, [&](int64_t b, int64_t e, int) { swiglu_inplace(gate_.data() + b, up_.data() + b, e - b); },
      pool_->grain_for_work(32));
  matmul(L.ffn_down, gate_.data(), n, hp_.n_ff, delta_.data(), E, *pool_, matmul_scratch_);
  for (int64_t i = 0; i < n * E; ++i) hidden[i] += delta_[i];
}

Status Transformer::run_layers(LayerSource& source, const ModelWeights& w, const ForwardBatch& batch, int begin,
                               int end, KvCache& cache, float* hidden) {
  SF_CHECK(begin >= 0 && end <= hp_.n_layer && begin <= end);
  for (int l = begin; l < end; ++l) {
    SF_ASSIGN_OR_RETURN(const LayerWeights* layer, source.acquire_layer(l));
    run_layer(*layer, l, w.rope_freqs, batch, cache, hidden);
    source.release_layer(l);
  }
  return Status::Ok();
}

Status Transformer::logits(LayerSource& source, const ModelWeights& w, const float* hidden, int64_t n_rows,
                           float* logits) {
  SF_ASSIGN_OR_RETURN(const WeightMatrix* head, source.acquire_output());
  apply_head(*head, w, hidden, n_rows, logits);
  source.release_output();
  return Status::Ok();
}

void Transformer::apply_head(const WeightMatrix& head, const ModelWeights& w, const float* hidden, int64_t n_rows,
                             float* logits) {
  reserve(n_rows);
  const int E = hp_.n_embd;
  for (int64_t t = 0; t < n_rows; ++t) rms_norm(hidden + t * E, w.output_norm, hp_.rms_eps, E, xb_.data() + t * E);
  matmul(head, xb_.data(), n_rows, E, logits, hp_.n_vocab, *pool_, matmul_scratch_);
}

void Transformer::run_layers(const ModelWeights& w, const ForwardBatch& batch, int begin, int end, KvCache& cache,
                             float* hidden) {
  SF_CHECK(w.fully_resident(), "run_layers without a LayerSource needs fully resident weights");
  ResidentLayerSource source(w);
  SF_CHECK(run_layers(source, w, batch, begin, end, cache, hidden).ok());
}

void Transformer::logits(const ModelWeights& w, const float* hidden, int64_t n_rows, float* logits) {
  SF_CHECK(w.fully_resident(), "logits without a LayerSource needs fully resident weights");
  ResidentLayerSource source(w);
  SF_CHECK(this->logits(source, w, hidden, n_rows, logits).ok());
}

}  // namespace sf
