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

// q:    [n_tokens, n_head * head_dim] f32
// k, v: [n_kv cells, n_head_kv * head_dim] f16 (cell c at k + c * kv_row)
// mask: [n_tokens, n_kv] bytes, non-zero = row may attend to the cell (a row with no
//       visible cell gets zeros)
// out:  [n_tokens, n_head * head_dim] f32
void attention(const AttentionShape& shape, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
               int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out, ThreadPool& pool);

// Scalar reference with the same semantics (double accumulation); the test oracle.
void attention_ref(const AttentionShape& shape, const float* q, int64_t n_tokens, const uint16_t* k, const uint16_t* v,
                   int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out);

}  // namespace sf
