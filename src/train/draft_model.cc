#include "train/draft_model.h"

#include <algorithm>
#include <cmath>

#include "base/fp16.h"

namespace sf::train {

Status DraftConfig::validate() const {
  if (n_vocab <= 0) return Status::Error("draft: the vocabulary is empty");
  if (n_layer <= 0 || n_embd <= 0 || n_head <= 0 || n_head_kv <= 0 || n_ff <= 0)
    return Status::Error("draft: layers, embd, heads, kv-heads and ffn must all be positive");
  if (n_embd % n_head != 0) return Status::Errorf("draft: embd %d is not a multiple of heads %d", n_embd, n_head);
  if (head_dim() % 2 != 0) return Status::Errorf("draft: head size %d must be even (RoPE)", head_dim());
  if (n_head % n_head_kv != 0)
    return Status::Errorf("draft: heads %d is not a multiple of kv-heads %d", n_head, n_head_kv);
  return Status::Ok();
}

ParamLayout::ParamLayout(const DraftConfig& c) {
  const int64_t E = c.n_embd, V = c.n_vocab, F = c.n_ff, Q = c.q_dim(), K = c.kv_dim();
  int64_t off = 0;
  auto take = [&](int64_t n) {
    int64_t o = off;
    off += n;
    return o;
  };
  token_embd = take(V * E);
  for (int l = 0; l < c.n_layer; ++l) {
    Layer L{};
    L.attn_norm = take(E);
    L.wq = take(Q * E);
    L.wk = take(K * E);
    L.wv = take(K * E);
    L.wo = take(E * Q);
    L.ffn_norm = take(E);
    L.ffn_gate = take(F * E);
    L.ffn_up = take(F * E);
    L.ffn_down = take(E * F);
    layers.push_back(L);
  }
  output_norm = take(E);
  output = take(V * E);
  total = off;
}

std::vector<ParamLayout::Named> ParamLayout::named(const DraftConfig& c) const {
  const int64_t E = c.n_embd, V = c.n_vocab, F = c.n_ff, Q = c.q_dim(), K = c.kv_dim();
  std::vector<Named> out;
  out.push_back({"token_embd.weight", token_embd, E, V});
  for (int l = 0; l < c.n_layer; ++l) {
    const Layer& L = layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    out.push_back({p + "attn_norm.weight", L.attn_norm, E, 1});
    out.push_back({p + "attn_q.weight", L.wq, E, Q});
    out.push_back({p + "attn_k.weight", L.wk, E, K});
    out.push_back({p + "attn_v.weight", L.wv, E, K});
    out.push_back({p + "attn_output.weight", L.wo, Q, E});
    out.push_back({p + "ffn_norm.weight", L.ffn_norm, E, 1});
    out.push_back({p + "ffn_gate.weight", L.ffn_gate, E, F});
    out.push_back({p + "ffn_up.weight", L.ffn_up, E, F});
    out.push_back({p + "ffn_down.weight", L.ffn_down, F, E});
  }
  out.push_back({"output_norm.weight", output_norm, E, 1});
  out.push_back({"output.weight", output, E, V});
  return out;
}

std::vector<float> init_params(const DraftConfig& c, uint64_t seed) {
  ParamLayout layout(c);
  std::vector<float> p(layout.total);
  std::mt19937_64 rng(seed);
  // Box-Muller on the raw generator output: std::normal_distribution is not specified
  // bit-for-bit across standard libraries, this is.
  auto normal = [&]() {
    double u1 = (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;
    double u2 = static_cast<double>(rng() >> 11) / 9007199254740992.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  const double resid_scale = 1.0 / std::sqrt(2.0 * c.n_layer);
  for (const auto& t : layout.named(c)) {
    float* w = p.data() + t.offset;
    const int64_t n = t.cols * t.rows;
    if (t.rows == 1) {
      std::fill_n(w, n, 1.0f);
      continue;
    }
    bool resid = t.name.find("attn_output") != std::string::npos || t.name.find("ffn_down") != std::string::npos;
    double sd = 0.02 * (resid ? resid_scale : 1.0);
    for (int64_t i = 0; i < n; ++i) w[i] = static_cast<float>(normal() * sd);
  }
  return p;
}

template <typename T>
const std::vector<T>& DraftModelRunner<T>::forward(const T* params, const int32_t* tokens, int64_t n_seq,
                                                   int64_t seq_len, bool round_kv_to_half) {
  const int64_t n = n_seq * seq_len, E = c_.n_embd, V = c_.n_vocab, F = c_.n_ff, Q = c_.q_dim(), K = c_.kv_dim();
  const T eps = static_cast<T>(c_.rms_eps);
  n_seq_ = n_seq;
  seq_len_ = seq_len;
  tokens_.assign(tokens, tokens + n);
  positions_.resize(n);
  for (int64_t i = 0; i < n; ++i) positions_[i] = static_cast<int32_t>(i % seq_len);
  AttentionShape as{n_seq, seq_len, c_.n_head, c_.n_head_kv, c_.head_dim()};
  acts_.resize(c_.n_layer);
  std::vector<T> x(n * E), tmp(n * E);
  embedding_forward(params + layout_.token_embd, tokens, n, E, x.data());
  for (int l = 0; l < c_.n_layer; ++l) {
    const auto& L = layout_.layers[l];
    LayerActs& a = acts_[l];
    a.x_in = x;
    a.xn.resize(n * E);
    a.rstd1.resize(n);
    rms_norm_forward(x.data(), params + L.attn_norm, eps, n, E, a.xn.data(), a.rstd1.data());
    a.q.resize(n * Q);
    a.k.resize(n * K);
    a.v.resize(n * K);
    linear_forward(a.xn.data(), params + L.wq, n, E, Q, a.q.data(), pool_);
    linear_forward(a.xn.data(), params + L.wk, n, E, K, a.k.data(), pool_);
    linear_forward(a.xn.data(), params + L.wv, n, E, K, a.v.data(), pool_);
    rope_forward(a.q.data(), positions_.data(), n, c_.n_head, c_.head_dim(), c_.rope_freq_base);
    rope_forward(a.k.data(), positions_.data(), n, c_.n_head_kv, c_.head_dim(), c_.rope_freq_base);
    if (round_kv_to_half) {
      for (auto& e : a.k) e = static_cast<T>(fp16_to_fp32(fp32_to_fp16(static_cast<float>(e))));
      for (auto& e : a.v) e = static_cast<T>(fp16_to_fp32(fp32_to_fp16(static_cast<float>(e))));
    }
    a.probs.resize(n_seq * c_.n_head * seq_len * seq_len);
    a.att.resize(n * Q);
    attention_forward(as, a.q.data(), a.k.data(), a.v.data(), a.att.data(), a.probs.data(), pool_);
    linear_forward(a.att.data(), params + L.wo, n, Q, E, tmp.data(), pool_);
    for (int64_t i = 0; i < n * E; ++i) x[i] += tmp[i];
    a.x_mid = x;
    a.xn2.resize(n * E);
    a.rstd2.resize(n);
    rms_norm_forward(x.data(), params + L.ffn_norm, eps, n, E, a.xn2.data(), a.rstd2.data());
    a.g.resize(n * F);
    a.u.resize(n * F);
    a.h.resize(n * F);
    linear_forward(a.xn2.data(), params + L.ffn_gate, n, E, F, a.g.data(), pool_);
    linear_forward(a.xn2.data(), params + L.ffn_up, n, E, F, a.u.data(), pool_);
    swiglu_forward(a.g.data(), a.u.data(), n * F, a.h.data());
    linear_forward(a.h.data(), params + L.ffn_down, n, F, E, tmp.data(), pool_);
    for (int64_t i = 0; i < n * E; ++i) x[i] += tmp[i];
  }
  x_final_ = x;
  xn_final_.resize(n * E);
  rstd_final_.resize(n);
  rms_norm_forward(x.data(), params + layout_.output_norm, eps, n, E, xn_final_.data(), rstd_final_.data());
  logits_.resize(n * V);
  linear_forward(xn_final_.data(), params + layout_.output, n, E, V, logits_.data(), pool_);
  return logits_;
}

template <typename T>
void DraftModelRunner<T>::backward(const T* params, const T* dlogits, T* grad) {
  const int64_t n = n_seq_ * seq_len_, E = c_.n_embd, V = c_.n_vocab, F = c_.n_ff, Q = c_.q_dim(), K = c_.kv_dim();
  std::fill_n(grad, layout_.total, T(0));
  AttentionShape as{n_seq_, seq_len_, c_.n_head, c_.n_head_kv, c_.head_dim()};
  std::vector<T> dxn(n * E, T(0)), dx(n * E, T(0));
  linear_backward(dlogits, xn_final_.data(), params + layout_.output, n, E, V, dxn.data(), grad + layout_.output,
                  pool_);
  rms_norm_backward(dxn.data(), x_final_.data(), params + layout_.output_norm, rstd_final_.data(), n, E, dx.data(),
                    grad + layout_.output_norm);
  std::vector<T> dh, dg, du, datt, dq, dk, dv;
  for (int l = c_.n_layer - 1; l >= 0; --l) {
    const auto& L = layout_.layers[l];
    const LayerActs& a = acts_[l];
    // FFN block: x_out = x_mid + down(swiglu(gate(xn2), up(xn2))); dx flows through.
    dh.assign(n * F, T(0));
    linear_backward(dx.data(), a.h.data(), params + L.ffn_down, n, F, E, dh.data(), grad + L.ffn_down, pool_);
    dg.assign(n * F, T(0));
    du.assign(n * F, T(0));
    swiglu_backward(dh.data(), a.g.data(), a.u.data(), n * F, dg.data(), du.data());
    dxn.assign(n * E, T(0));
    linear_backward(dg.data(), a.xn2.data(), params + L.ffn_gate, n, E, F, dxn.data(), grad + L.ffn_gate, pool_);
    linear_backward(du.data(), a.xn2.data(), params + L.ffn_up, n, E, F, dxn.data(), grad + L.ffn_up, pool_);
    rms_norm_backward(dxn.data(), a.x_mid.data(), params + L.ffn_norm, a.rstd2.data(), n, E, dx.data(),
                      grad + L.ffn_norm);
    // Attention block.
    datt.assign(n * Q, T(0));
    linear_backward(dx.data(), a.att.data(), params + L.wo, n, Q, E, datt.data(), grad + L.wo, pool_);
    dq.assign(n * Q, T(0));
    dk.assign(n * K, T(0));
    dv.assign(n * K, T(0));
    attention_backward(as, datt.data(), a.q.data(), a.k.data(), a.v.data(), a.probs.data(), dq.data(), dk.data(),
                       dv.data(), pool_);
    rope_backward(dq.data(), positions_.data(), n, c_.n_head, c_.head_dim(), c_.rope_freq_base);
    rope_backward(dk.data(), positions_.data(), n, c_.n_head_kv, c_.head_dim(), c_.rope_freq_base);
    dxn.assign(n * E, T(0));
    linear_backward(dq.data(), a.xn.data(), params + L.wq, n, E, Q, dxn.data(), grad + L.wq, pool_);
    linear_backward(dk.data(), a.xn.data(), params + L.wk, n, E, K, dxn.data(), grad + L.wk, pool_);
    linear_backward(dv.data(), a.xn.data(), params + L.wv, n, E, K, dxn.data(), grad + L.wv, pool_);
    rms_norm_backward(dxn.data(), a.x_in.data(), params + L.attn_norm, a.rstd1.data(), n, E, dx.data(),
                      grad + L.attn_norm);
  }
  embedding_backward(dx.data(), tokens_.data(), n, E, grad + layout_.token_embd);
}

template class DraftModelRunner<float>;
template class DraftModelRunner<double>;

}  // namespace sf::train
