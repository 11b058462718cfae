#include "ops/attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "base/fp16.h"
#include "ops/activation.h"
#include "ops/attention_simd.h"
#include "quant/dot_kernel.h"

namespace sf {

void attention(const AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
               int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out, ThreadPool& pool) {
  const int group = s.n_head / s.n_head_kv;
  const int64_t q_row = static_cast<int64_t>(s.n_head) * s.head_dim;
  // The F16 x F32 dot kernel is the same SIMD code the F16 matmul uses.
  const DotKernel* dot = find_dot_kernel(GgmlType::F16, GgmlType::F32);
  pool.parallel_for(n_tokens * s.n_head, [&](int64_t begin, int64_t end, int) {
    std::vector<float> scores(static_cast<size_t>(n_kv));
    std::vector<float> acc(static_cast<size_t>(s.head_dim));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / s.n_head;
      const int h = static_cast<int>(task % s.n_head);
      const int kvh = h / group;
      const float* qh = q + t * q_row + static_cast<int64_t>(h) * s.head_dim;
      const uint8_t* m = mask + t * n_kv;
      // One call for every cell (bit-identical to a dot per cell); masked cells are computed
      // and then discarded, which costs less than a call per visible cell.
      dot->dot_rows(k + static_cast<int64_t>(kvh) * s.head_dim, kv_row * sizeof(uint16_t), n_kv, qh, s.head_dim,
                    scores.data());
      for (int64_t c = 0; c < n_kv; ++c)
        scores[c] = m[c] ? scores[c] * s.scale : -std::numeric_limits<float>::infinity();
      softmax_inplace(scores.data(), n_kv);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t c = 0; c < n_kv; ++c) {
        const float p = scores[c];
        if (p == 0.0f) continue;
        axpy_f16(p, v + c * kv_row + static_cast<int64_t>(kvh) * s.head_dim, acc.data(), s.head_dim);
      }
      float* o = out + t * q_row + static_cast<int64_t>(h) * s.head_dim;
      for (int d = 0; d < s.head_dim; ++d) o[d] = acc[d];
    }
  });
}

void attention_ref(const AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
                   int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out) {
  const int group = s.n_head / s.n_head_kv;
  const int64_t q_row = static_cast<int64_t>(s.n_head) * s.head_dim;
  std::vector<double> scores(static_cast<size_t>(n_kv));
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int h = 0; h < s.n_head; ++h) {
      const int kvh = h / group;
      const float* qh = q + t * q_row + static_cast<int64_t>(h) * s.head_dim;
      double max = -INFINITY;
      for (int64_t c = 0; c < n_kv; ++c) {
        if (!mask[t * n_kv + c]) {
          scores[c] = -INFINITY;
          continue;
        }
        double acc = 0;
        for (int d = 0; d < s.head_dim; ++d)
          acc += static_cast<double>(qh[d]) * fp16_to_fp32(k[c * kv_row + kvh * s.head_dim + d]);
        scores[c] = acc * s.scale;
        max = std::max(max, scores[c]);
      }
      double sum = 0;
      for (int64_t c = 0; c < n_kv; ++c) {
        scores[c] = std::isinf(scores[c]) ? 0.0 : std::exp(scores[c] - max);
        sum += scores[c];
      }
      float* o = out + t * q_row + static_cast<int64_t>(h) * s.head_dim;
      for (int d = 0; d < s.head_dim; ++d) {
        double acc = 0;
        for (int64_t c = 0; c < n_kv; ++c) acc += scores[c] / sum * fp16_to_fp32(v[c * kv_row + kvh * s.head_dim + d]);
        o[d] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace sf
