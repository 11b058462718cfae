// Forward and backward passes of the pieces a small decoder is trained from: embedding
// lookup, RMSNorm, linear layers, RoPE (normal mode), causal multi-head attention with
// grouped KV heads, SwiGLU and the losses (hard-label cross-entropy, Reduced KL over the
// teacher's top-K, full KL).
//
// Every function is a template over the scalar type: the trainer runs in float, the
// gradient checks run the same code in double. Tensors are dense row-major arrays whose
// shapes are given in the comments; "rows" are tokens. Backward functions ACCUMULATE (+=)
// into parameter gradients and into input gradients, so residual branches just add up;
// callers zero them first.
//
// Threads: functions that take a ThreadPool* (nullable: run inline) split their work so
// that every output element is computed by one thread in a fixed order, so results do not
// depend on the thread count (training is deterministic). Preconditions (shapes) are
// SF_CHECKed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/check.h"
#include "base/thread_pool.h"

namespace sf::train {

namespace detail {
template <typename F>
void maybe_parallel(ThreadPool* pool, int64_t n, const F& fn, int64_t grain = 1) {
  if (pool == nullptr || pool->size() <= 1 || n <= 1) {
    fn(0, n);
    return;
  }
  pool->parallel_for(
      n, [&](int64_t b, int64_t e, int) { fn(b, e); }, grain);
}
// Eight independent partial sums (a fixed order, so still deterministic) let the compiler
// vectorise the reduction without -ffast-math.
template <typename T>
T dot(const T* a, const T* b, int64_t n) {
  T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  T s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}
template <typename T>
void axpy(T a, const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
}  // namespace detail

// ---- embedding: out[t] = table[tokens[t]] -------------------------------------------
// table [n_vocab, n_embd]; out [n, n_embd].
template <typename T>
void embedding_forward(const T* table, const int32_t* tokens, int64_t n, int64_t n_embd, T* out) {
  for (int64_t t = 0; t < n; ++t) std::copy_n(table + tokens[t] * n_embd, n_embd, out + t * n_embd);
}
// dtable[tokens[t]] += dout[t].
template <typename T>
void embedding_backward(const T* dout, const int32_t* tokens, int64_t n, int64_t n_embd, T* dtable) {
  for (int64_t t = 0; t < n; ++t) detail::axpy<T>(1, dout + t * n_embd, dtable + tokens[t] * n_embd, n_embd);
}

// ---- RMSNorm: y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) ----------------------
// x, y [n, d]; w [d]; rstd [n] (saved for backward).
template <typename T>
void rms_norm_forward(const T* x, const T* w, T eps, int64_t n, int64_t d, T* y, T* rstd) {
  for (int64_t t = 0; t < n; ++t) {
    const T* xr = x + t * d;
    T ss = detail::dot(xr, xr, d);
    T r = T(1) / std::sqrt(ss / T(d) + eps);
    rstd[t] = r;
    for (int64_t i = 0; i < d; ++i) y[t * d + i] = xr[i] * r * w[i];
  }
}
// dx += d/dx, dw += d/dw.
template <typename T>
void rms_norm_backward(const T* dy, const T* x, const T* w, const T* rstd, int64_t n, int64_t d, T* dx, T* dw) {
  for (int64_t t = 0; t < n; ++t) {
    const T* xr = x + t * d;
    const T* g = dy + t * d;
    T r = rstd[t];
    T gx = 0;  // sum_i dy_i w_i x_i
    for (int64_t i = 0; i < d; ++i) gx += g[i] * w[i] * xr[i];
    T c = gx * r * r * r / T(d);
    for (int64_t i = 0; i < d; ++i) {
      dx[t * d + i] += g[i] * w[i] * r - xr[i] * c;
      dw[i] += g[i] * xr[i] * r;
    }
  }
}

// ---- linear: y[t, o] = sum_i W[o, i] x[t, i] (W in GGUF layout: one row per output) ----
// x [n, in]; W [out, in]; y [n, out].
template <typename T>
void linear_forward(const T* x, const T* W, int64_t n, int64_t in, int64_t out, T* y, ThreadPool* pool) {
  detail::maybe_parallel(pool, n, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t)
      for (int64_t o = 0; o < out; ++o) y[t * out + o] = detail::dot(W + o * in, x + t * in, in);
  });
}
// dx += dy W (if dx), dW += dy^T x.
template <typename T>
void linear_backward(const T* dy, const T* x, const T* W, int64_t n, int64_t in, int64_t out, T* dx, T* dW,
                     ThreadPool* pool) {
  if (dx != nullptr) {
    detail::maybe_parallel(pool, n, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t)
        for (int64_t o = 0; o < out; ++o) detail::axpy(dy[t * out + o], W + o * in, dx + t * in, in);
    });
  }
  detail::maybe_parallel(pool, out, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o)
      for (int64_t t = 0; t < n; ++t) detail::axpy(dy[t * out + o], x + t * in, dW + o * in, in);
  });
}

// ---- RoPE, normal (llama) mode: rotates pairs (x[2i], x[2i+1]) of every head ----------
// x [n, n_head * head_dim] in place; positions [n]. Angle = pos * base^(-2i/head_dim).
template <typename T>
void rope_rotate(T* x, const int32_t* positions, int64_t n, int n_head, int head_dim, double freq_base, bool inverse) {
  for (int64_t t = 0; t < n; ++t) {
    for (int i = 0; i < head_dim / 2; ++i) {
      double theta = positions[t] * std::pow(freq_base, -2.0 * i / head_dim);
      T c = static_cast<T>(std::cos(theta));
      T s = static_cast<T>(inverse ? -std::sin(theta) : std::sin(theta));
      for (int h = 0; h < n_head; ++h) {
        T* p = x + t * n_head * head_dim + h * head_dim + 2 * i;
        T x0 = p[0], x1 = p[1];
        p[0] = x0 * c - x1 * s;
        p[1] = x0 * s + x1 * c;
      }
    }
  }
}
template <typename T>
void rope_forward(T* x, const int32_t* positions, int64_t n, int n_head, int head_dim, double freq_base) {
  rope_rotate(x, positions, n, n_head, head_dim, freq_base, false);
}
// The rotation is orthogonal, so the backward pass rotates the gradient back (in place).
template <typename T>
void rope_backward(T* dx, const int32_t* positions, int64_t n, int n_head, int head_dim, double freq_base) {
  rope_rotate(dx, positions, n, n_head, head_dim, freq_base, true);
}

// ---- causal attention with GQA over n_seq independent sequences of seq_len rows --------
// q [n, n_head*hd], k/v [n, n_kv*hd], out [n, n_head*hd]; n = n_seq * seq_len; row i of a
// sequence attends to rows 0..i of the same sequence. probs [n_seq, n_head, L, L] saved.
struct AttentionShape {
  int64_t n_seq = 1, seq_len = 1;
  int n_head = 1, n_kv = 1, head_dim = 1;
};
template <typename T>
void attention_forward(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, T* probs,
                       ThreadPool* pool) {
  const int64_t L = s.seq_len, hd = s.head_dim, qd = s.n_head * hd, kd = s.n_kv * hd;
  const int group = s.n_head / s.n_kv;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
  detail::maybe_parallel(pool, s.n_seq * s.n_head, [&](int64_t b, int64_t e) {
    for (int64_t sh = b; sh < e; ++sh) {
      int64_t sq = sh / s.n_head;
      int h = static_cast<int>(sh % s.n_head), kh = h / group;
      T* P = probs + sh * L * L;
      for (int64_t i = 0; i < L; ++i) {
        const T* qi = q + (sq * L + i) * qd + h * hd;
        T* pi = P + i * L;
        T mx = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          pi[j] = detail::dot(qi, k + (sq * L + j) * kd + kh * hd, hd) * scale;
          mx = std::max(mx, pi[j]);
        }
        T sum = 0;
        for (int64_t j = 0; j <= i; ++j) sum += (pi[j] = std::exp(pi[j] - mx));
        for (int64_t j = 0; j <= i; ++j) pi[j] /= sum;
        for (int64_t j = i + 1; j < L; ++j) pi[j] = 0;
        T* oi = out + (sq * L + i) * qd + h * hd;
        std::fill_n(oi, hd, T(0));
        for (int64_t j = 0; j <= i; ++j) detail::axpy(pi[j], v + (sq * L + j) * kd + kh * hd, oi, hd);
      }
    }
  });
}
// dq, dk, dv += gradients. Parallel over (sequence, kv head) so accumulations never race.
template <typename T>
void attention_backward(const AttentionShape& s, const T* dout, const T* q, const T* k, const T* v, const T* probs,
                        T* dq, T* dk, T* dv, ThreadPool* pool) {
  const int64_t L = s.seq_len, hd = s.head_dim, qd = s.n_head * hd, kd = s.n_kv * hd;
  const int group = s.n_head / s.n_kv;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
  detail::maybe_parallel(pool, s.n_seq * s.n_kv, [&](int64_t b, int64_t e) {
    std::vector<T> dp(L);
    for (int64_t sk = b; sk < e; ++sk) {
      int64_t sq = sk / s.n_kv;
      int kh = static_cast<int>(sk % s.n_kv);
      for (int h = kh * group; h < (kh + 1) * group; ++h) {
        const T* P = probs + (sq * s.n_head + h) * L * L;
        for (int64_t i = 0; i < L; ++i) {
          const T* doi = dout + (sq * L + i) * qd + h * hd;
          const T* pi = P + i * L;
          T pdp = 0;
          for (int64_t j = 0; j <= i; ++j) {
            dp[j] = detail::dot(doi, v + (sq * L + j) * kd + kh * hd, hd);
            pdp += pi[j] * dp[j];
            detail::axpy(pi[j], doi, dv + (sq * L + j) * kd + kh * hd, hd);
          }
          const T* qi = q + (sq * L + i) * qd + h * hd;
          T* dqi = dq + (sq * L + i) * qd + h * hd;
          for (int64_t j = 0; j <= i; ++j) {
            T ds = pi[j] * (dp[j] - pdp) * scale;
            detail::axpy(ds, k + (sq * L + j) * kd + kh * hd, dqi, hd);
            detail::axpy(ds, qi, dk + (sq * L + j) * kd + kh * hd, hd);
          }
        }
      }
    }
  });
}

// ---- SwiGLU: h = silu(g) * u ------------------------------------------------------------
template <typename T>
void swiglu_forward(const T* g, const T* u, int64_t n, T* h) {
  for (int64_t i = 0; i < n; ++i) h[i] = g[i] / (T(1) + std::exp(-g[i])) * u[i];
}
template <typename T>
void swiglu_backward(const T* dh, const T* g, const T* u, int64_t n, T* dg, T* du) {
  for (int64_t i = 0; i < n; ++i) {
    T sig = T(1) / (T(1) + std::exp(-g[i]));
    dg[i] += dh[i] * u[i] * sig * (T(1) + g[i] * (T(1) - sig));
    du[i] += dh[i] * g[i] * sig;
  }
}

// ---- losses over logits [n, n_vocab]; each returns the mean over rows and writes
// dlogits = d(mean loss)/d(logits) (overwritten, not accumulated) -----------------------

// log-softmax helper: writes q = softmax(row) and returns logsumexp(row).
template <typename T>
T softmax_row(const T* row, int64_t v, T* q) {
  T mx = *std::max_element(row, row + v);
  T sum = 0;
  for (int64_t i = 0; i < v; ++i) sum += (q[i] = std::exp(row[i] - mx));
  for (int64_t i = 0; i < v; ++i) q[i] /= sum;
  return mx + std::log(sum);
}

// Hard labels: -log softmax(logits)[target].
template <typename T>
T cross_entropy(const T* logits, const int32_t* targets, int64_t n, int64_t v, T* dlogits) {
  T loss = 0;
  for (int64_t t = 0; t < n; ++t) {
    T lse = softmax_row(logits + t * v, v, dlogits + t * v);
    loss += lse - logits[t * v + targets[t]];
    dlogits[t * v + targets[t]] -= 1;
    for (int64_t i = 0; i < v; ++i) dlogits[t * v + i] /= T(n);
  }
  return loss / T(n);
}

// The teacher's view of one position: its top-K token ids and logits (descending), and
// the logsumexp of its full distribution (so the top-K probabilities are exact).
struct TeacherTopK {
  int k = 0;
  const int32_t* ids = nullptr;   // [n, k]
  const float* logits = nullptr;  // [n, k]
  const float* lse = nullptr;     // [n]
};

enum class DistillLoss {
  kReducedKl,  // CATS App. B: -sum_{v in topK} p~(v) log q(v), p~ = teacher top-K renormalised
  kFullKl,     // KL(p || q) over the whole vocabulary; mass outside the top-K is spread
               // uniformly over the other tokens (exact when k == n_vocab)
};

// Returns the mean over rows of KL(target || q) (the cross-entropy minus the target's
// entropy, so 0 means a perfect match); the gradient is the same as the cross-entropy's.
template <typename T>
T distill_loss(DistillLoss kind, const T* logits, const TeacherTopK& teacher, int64_t n, int64_t v, T* dlogits) {
  T loss = 0;
  const int k = teacher.k;
  std::vector<T> p(k);
  for (int64_t t = 0; t < n; ++t) {
    T* q = dlogits + t * v;
    T lse = softmax_row(logits + t * v, v, q);
    const int32_t* ids = teacher.ids + t * k;
    const float* tl = teacher.logits + t * k;
    T mass = 0;
    for (int j = 0; j < k; ++j) mass += (p[j] = std::exp(static_cast<T>(tl[j]) - static_cast<T>(teacher.lse[t])));
    T tail = 0;
    if (kind == DistillLoss::kReducedKl || k >= v) {
      for (int j = 0; j < k; ++j) p[j] /= mass;
    } else {
      tail = std::max<T>(T(1) - mass, T(0)) / T(v - k);
    }
    T row = 0;
    if (tail > 0) {
      // Tail tokens: every token not in the top-K gets probability `tail`.
      T sum_logq_all = 0;
      for (int64_t i = 0; i < v; ++i) sum_logq_all += logits[t * v + i] - lse;
      T sum_logq_top = 0;
      for (int j = 0; j < k; ++j) sum_logq_top += logits[t * v + ids[j]] - lse;
      row += tail * (std::log(tail) * T(v - k) - (sum_logq_all - sum_logq_top));
      for (int64_t i = 0; i < v; ++i) q[i] -= tail;
      for (int j = 0; j < k; ++j) q[ids[j]] += tail;
    }
    for (int j = 0; j < k; ++j) {
      if (p[j] > 0) row += p[j] * (std::log(p[j]) - (logits[t * v + ids[j]] - lse));
      q[ids[j]] -= p[j];
    }
    loss += row;
    for (int64_t i = 0; i < v; ++i) q[i] /= T(n);
  }
  return loss / T(n);
}

}  // namespace sf::train
