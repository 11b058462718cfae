// The attention kernel of one query row for the query heads that share one KV head, over
// an explicit list of visible cells (ops/visible_cells.h), and of a block of such rows whose
// lists begin alike (a token tree's rows all see the committed prefix and the root). SIMD
// with runtime dispatch (Google Highway); ops/attention.cc splits a batch into such calls.
//
// Every reduction order depends only on head_dim and on the position of a cell in the
// visible list, never on cell indices, masked cells or other rows:
//  - a key dot multiplies lanes of q and the cell's key (f16 widened to f32; several lanes
//    per chunk, chunks added in order) and folds the lanes with one fixed pattern, the same
//    for every cell whatever its place in a block of four;
//  - the softmax sum puts visible cell j in lane j % lanes;
//  - the value sum adds cells in list order into f32 lanes over head_dim.
// So a row gives bit-identical results inside a tree-verification batch and alone. A key
// or value widened from f16 is exact, so a block of rows may share one widened tile: what
// each row computes from it is its own, in its own order.
#pragma once

#include <cstdint>

namespace sf {

struct AttentionRowArgs {
  const float* q = nullptr;  // group query heads, head_dim floats each, contiguous
  int group = 1;             // query heads sharing this KV head
  int head_dim = 0;
  float scale = 1.0f;
  const uint16_t* k = nullptr;  // this KV head's keys in cell 0 (f16); cell c at k + c * kv_row
  const uint16_t* v = nullptr;  // same for values
  int64_t kv_row = 0;
  const int32_t* cells = nullptr;  // visible cells, ascending (any order works; it fixes the sums)
  int64_t n_cells = 0;             // >= 1
  float* scores = nullptr;         // scratch: attention_row_scratch_floats(group, head_dim, n_cells)
  float* out = nullptr;            // group heads' results, head_dim floats each, contiguous
};

// Per head: the scores of the cells, the value sums and 1 / (sum of exponentials).
inline int64_t attention_row_scratch_floats(int group, int head_dim, int64_t n_cells) {
  return static_cast<int64_t>(group) * (n_cells + head_dim + 1);
}

void attend_visible_cells(const AttentionRowArgs& a);

// n_rows >= 1 rows of the same KV head (equal group, head_dim, scale, k, v and kv_row; their own
// q, cells, scores and out) whose lists have the same first n_shared cells (n_shared <= every
// n_cells). Each tile of those cells is widened once and scored and summed for every row;
// the rest of each list is the row's own. Every row's output is bit-identical to
// attend_visible_cells(rows[r]) alone.
void attend_visible_rows(const AttentionRowArgs* rows, int n_rows, int64_t n_shared);

// The kernels compiled for one Highway target (bits as in dot_kernel_targets(); 0 = best),
// so tests can run every instruction set this CPU supports.
void attend_visible_cells_for_target(const AttentionRowArgs& a, int64_t target);
void attend_visible_rows_for_target(const AttentionRowArgs* rows, int n_rows, int64_t n_shared, int64_t target);

}  // namespace sf
