// Multi-head attention of a batch of query rows over cached keys/values with an explicit
// mask, so causal prefill, single-token decode and token-tree verification are the same
// operation. Grouped-query attention: query head h reads KV head h / (n_head / n_head_kv).
//
// Keys and values are stored as IEEE half (like llama.cpp's default cache type); scores,
// softmax and the value sum are computed in f32. A query row's result depends only on its
// own q, mask row and the cache, never on other rows of the batch.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"

namespace sf {

struct AttentionShape {
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  float scale = 1.0f;  // usually 1/sqrt(head_dim)
};

// Where KV head h's keys (values) of cell c are: at k + h * head_stride + c * cell_stride
// halves. KvCache keeps a head's cells together (head-major: cell_stride = head_dim);
// cell_major() is the layout of one row of all heads per cell.
struct KvLayout {
  int64_t cell_stride = 0;
  int64_t head_stride = 0;
  static KvLayout cell_major(int n_head_kv, int head_dim) {
    return {static_cast<int64_t>(n_head_kv) * head_dim, head_dim};
  }
  // A head's `n_cells` cells (the cache's capacity, not only the filled ones) in a row.
  static KvLayout head_major(int64_t n_cells, int head_dim) { return {head_dim, n_cells * head_dim}; }
};

// q:    [n_tokens, n_head * head_dim] f32
// k, v: n_kv cells of n_head_kv heads, head_dim f16 each, placed as `layout` says
// mask: [n_tokens, n_kv] bytes, non-zero = row may attend to the cell (a row with no
//       visible cell gets zeros)
// out:  [n_tokens, n_head * head_dim] f32
void attention(const AttentionShape& shape, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
               KvLayout layout, int64_t n_kv, const uint8_t* mask, float* out, ThreadPool& pool);

// Scalar reference with the same semantics (double accumulation); the test oracle.
void attention_ref(const AttentionShape& shape, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
                   KvLayout layout, int64_t n_kv, const uint8_t* mask, float* out);

}  // namespace sf
