#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/fp16.h"
#include "ops/attention_rows.h"
#include "ops/visible_cells.h"

namespace sf {

namespace {

// Rows per task. The rows of a block share the widening of the cells they all see (a tree's
// committed prefix; with head_dim 8, widening was most of a row's cost: docs/kernels.md,
// "Attention: rows of a tree share the widened prefix"), so blocks are as large as these
// allow:
//  - at most kMaxBlockRows, and enough blocks for two tasks per thread (KV heads x blocks),
//    so that the threads stay balanced;
//  - the block's scores and sums (scratch per row) within kBlockScratchBytes, so that what
//    the key pass writes is still in L2 when the softmax and the value pass read it.
// Measured (one thread): 64 rather than 16 rows made 64-row stories-like passes 8-10% faster;
// for 1.1B-like heads 128 KiB was 8% slower than 512 KiB and 2 MiB no faster. The block size
// changes only where a row reads its widened keys and values from and which head its chains
// run beside, never its floats.
constexpr int64_t kMaxBlockRows = 64;
constexpr int64_t kBlockScratchBytes = 512 * 1024;

int64_t block_rows(int64_t n_tokens, int n_head_kv, int threads, int64_t row_scratch_floats) {
  const int64_t by_scratch = kBlockScratchBytes / (row_scratch_floats * static_cast<int64_t>(sizeof(float)));
  const int64_t cap = std::clamp<int64_t>(by_scratch, 1, kMaxBlockRows);
  const int64_t min_blocks = (2 * static_cast<int64_t>(threads) + n_head_kv - 1) / n_head_kv;
  const int64_t blocks = std::min(n_tokens, std::max((n_tokens + cap - 1) / cap, min_blocks));
  return (n_tokens + blocks - 1) / blocks;  // blocks of even size
}

}  // namespace

void attention(const AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
               KvLayout layout, int64_t n_kv, const uint8_t* mask, float* out, ThreadPool& pool) {
  if (n_tokens <= 0) return;
  const int group = s.n_head / s.n_head_kv;
  const int64_t q_row = static_cast<int64_t>(s.n_head) * s.head_dim;
  const int64_t head_block = static_cast<int64_t>(group) * s.head_dim;  // q/out floats per KV head
  const int64_t row_scratch = attention_row_scratch_floats(group, s.head_dim, n_kv);
  const int64_t block = block_rows(n_tokens, s.n_head_kv, pool.size(), row_scratch);
  const int64_t n_blocks = (n_tokens + block - 1) / block;
  // One task per (block of rows, KV head): the group's query heads share the visible-cell
  // list and the key/value rows they read, and the block's rows share the widened tiles of
  // the cells at the head of all their lists. Each row's arithmetic stays its own, so the
  // batch size and the blocks change nothing.
  const auto attend_tasks = [&](int64_t begin, int64_t end, int) {
    thread_local std::vector<int32_t> cells;          // block x n_kv: row r's list at r * n_kv
    thread_local std::vector<float> scores;           // block x row_scratch
    thread_local std::vector<AttentionRowArgs> args;  // the block's rows that see something
    if (args.size() < static_cast<size_t>(block)) args.resize(static_cast<size_t>(block));
    if (cells.size() < static_cast<size_t>(block * n_kv)) cells.resize(static_cast<size_t>(block * n_kv));
    if (scores.size() < static_cast<size_t>(block * row_scratch))
      scores.resize(static_cast<size_t>(block * row_scratch));
    int64_t n_cells[kMaxBlockRows];
    int64_t listed_block = -1, n_shared = 0;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / s.n_head_kv;
      const int kvh = static_cast<int>(task % s.n_head_kv);
      const int64_t t0 = b * block, rows = std::min(block, n_tokens - t0);
      if (b != listed_block) {
        int64_t first = -1;  // the first row that sees anything
        for (int64_t r = 0; r < rows; ++r) {
          int32_t* list = cells.data() + r * n_kv;
          n_cells[r] = visible_cells(mask + (t0 + r) * n_kv, n_kv, list);
          if (n_cells[r] == 0) continue;
          if (first < 0) {
            first = r;
            n_shared = n_cells[r];
          } else {
            n_shared = std::min(n_shared, common_prefix(cells.data() + first * n_kv, n_shared, list, n_cells[r]));
          }
        }
        listed_block = b;
      }
      int m = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t t = t0 + r;
        float* o = out + t * q_row + kvh * head_block;
        if (n_cells[r] == 0) {  // nothing visible: defined as zeros rather than 0/0
          std::fill(o, o + head_block, 0.0f);
          continue;
        }
        AttentionRowArgs& a = args[m++];
        a.q = q + t * q_row + kvh * head_block;
        a.group = group;
        a.head_dim = s.head_dim;
        a.scale = s.scale;
        a.k = k + kvh * layout.head_stride;
        a.v = v + kvh * layout.head_stride;
        a.kv_row = layout.cell_stride;
        a.cells = cells.data() + r * n_kv;
        a.n_cells = n_cells[r];
        a.scores = scores.data() + r * row_scratch;
        a.out = o;
      }
      if (m > 0) attend_visible_rows(args.data(), m, n_shared);
    }
  };
  // A task's work: scores and weighted values over the cells, for the group's query heads of
  // the block's rows.
  const double task_work = 2.0 * static_cast<double>(n_kv) * static_cast<double>(head_block * block);
  pool.parallel_for(n_blocks * s.n_head_kv, attend_tasks, pool.grain_for_work(task_work));
}

void attention_ref(const AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
                   KvLayout layout, int64_t n_kv, const uint8_t* mask, float* out) {
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
          acc += static_cast<double>(qh[d]) * fp16_to_fp32(k[c * layout.cell_stride + kvh * layout.head_stride + d]);
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
        for (int64_t c = 0; c < n_kv; ++c)
          acc += scores[c] / sum * fp16_to_fp32(v[c * layout.cell_stride + kvh * layout.head_stride + d]);
        o[d] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace sf
