#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/fp16.h"
#include "ops/attention_rows.h"
#include "ops/visible_cells.h"

namespace sf {

void attention(const AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
               int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out, ThreadPool& pool) {
  const int group = s.n_head / s.n_head_kv;
  const int64_t q_row = static_cast<int64_t>(s.n_head) * s.head_dim;
  const int64_t head_block = static_cast<int64_t>(group) * s.head_dim;  // q/out floats per KV head
  // One task per (row, KV head): the group's query heads share the visible-cell list and the
  // key/value rows they read. Rows never interact, so the batch size changes nothing.
  const auto attend_tasks = [&](int64_t begin, int64_t end, int) {
    thread_local std::vector<int32_t> cells;
    thread_local std::vector<float> scores;
    if (cells.size() < static_cast<size_t>(n_kv)) cells.resize(static_cast<size_t>(n_kv));
    const auto scratch = static_cast<size_t>(attention_row_scratch_floats(group, s.head_dim, n_kv));
    if (scores.size() < scratch) scores.resize(scratch);
    int64_t listed_row = -1, n_cells = 0;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / s.n_head_kv;
      const int kvh = static_cast<int>(task % s.n_head_kv);
      if (t != listed_row) {
        n_cells = visible_cells(mask + t * n_kv, n_kv, cells.data());
        listed_row = t;
      }
      float* o = out + t * q_row + kvh * head_block;
      if (n_cells == 0) {  // nothing visible: defined as zeros rather than 0/0
        std::fill(o, o + head_block, 0.0f);
        continue;
      }
      AttentionRowArgs a;
      a.q = q + t * q_row + kvh * head_block;
      a.group = group;
      a.head_dim = s.head_dim;
      a.scale = s.scale;
      a.k = k + static_cast<int64_t>(kvh) * s.head_dim;
      a.v = v + static_cast<int64_t>(kvh) * s.head_dim;
      a.kv_row = kv_row;
      a.cells = cells.data();
      a.n_cells = n_cells;
      a.scores = scores.data();
      a.out = o;
      attend_visible_cells(a);
    }
  };
  // A task's work: scores and weighted values over the cells, for the group's query heads.
  const double task_work = 2.0 * static_cast<double>(n_kv) * static_cast<double>(head_block);
  pool.parallel_for(n_tokens * s.n_head_kv, attend_tasks, pool.grain_for_work(task_work));
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
      float* o = out + t * q_row + static_cast<int64_t>(h) * s.head_dim;
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
      if (std::isinf(max)) {  // no visible cell
        std::fill(o, o + s.head_dim, 0.0f);
        continue;
      }
      double sum = 0;
      for (int64_t c = 0; c < n_kv; ++c) {
        scores[c] = std::isinf(scores[c]) ? 0.0 : std::exp(scores[c] - max);
        sum += scores[c];
      }
      for (int d = 0; d < s.head_dim; ++d) {
        double acc = 0;
        for (int64_t c = 0; c < n_kv; ++c) acc += scores[c] / sum * fp16_to_fp32(v[c * kv_row + kvh * s.head_dim + d]);
        o[d] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace sf
