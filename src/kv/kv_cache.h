// KvCache: the keys and values of one model, per layer and KV head, one row per cell.
//
// A cell holds the K and V of one token at one position. Layout: per layer, per KV head,
// the cells in order (head_dim halves each), so that attention, which reads one KV head's
// cells per task, reads contiguous memory. With the cells' rows of all heads together
// (cell-major), each of a head's cells was a quarter of a 512-byte row on the 1.1B; the
// kernel alone over 22 such layers at 2,048 cells took 4.8 ms a token against 2.7 ms
// head-major, and the model's decode there got 0.6-1.2 ms a token faster (docs/kernels.md,
// "Attention: a head's cells contiguous"). Plain decoding appends cells in order;
// speculative verification writes tree nodes into cells after the committed prefix, then
// keeps the accepted path by copying it into place (commit) and forgetting the rest
// (truncate). Storage is IEEE half, like llama.cpp's default cache type.
//
// Not thread-safe: one forward pass at a time writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/aligned_buffer.h"

namespace sf {

class KvCache {
 public:
  KvCache() = default;
  KvCache(int n_layer, int n_ctx, int n_head_kv, int head_dim);

  int n_layer() const { return n_layer_; }
  int n_ctx() const { return n_ctx_; }
  int n_head_kv() const { return n_head_kv_; }
  int head_dim() const { return head_dim_; }
  int kv_dim() const { return n_head_kv_ * head_dim_; }
  size_t bytes() const { return k_.size() + v_.size(); }
  static size_t bytes_for(int n_layer, int n_ctx, int kv_dim) {
    return 2ull * n_layer * n_ctx * kv_dim * sizeof(uint16_t);
  }

  // The keys (values) of KV head `head` in `cell`: head_dim halves. A head's cells are
  // head_dim apart, its heads head_stride() apart.
  uint16_t* k(int layer, int head, int cell) { return k_.as<uint16_t>() + offset(layer, head, cell); }
  uint16_t* v(int layer, int head, int cell) { return v_.as<uint16_t>() + offset(layer, head, cell); }
  const uint16_t* k(int layer, int head, int cell) const { return k_.as<uint16_t>() + offset(layer, head, cell); }
  const uint16_t* v(int layer, int head, int cell) const { return v_.as<uint16_t>() + offset(layer, head, cell); }
  int64_t head_stride() const { return static_cast<int64_t>(n_ctx_) * head_dim_; }

  // Number of cells holding committed tokens (the prefix every later batch attends to).
  int n_committed() const { return n_committed_; }
  void set_committed(int n);
  // Moves cell `from` to cell `to` in every layer (used to compact an accepted tree path).
  void move_cell(int from, int to);

 private:
  size_t offset(int layer, int head, int cell) const {
    return ((static_cast<size_t>(layer) * n_head_kv_ + head) * n_ctx_ + cell) * head_dim_;
  }
  int n_layer_ = 0, n_ctx_ = 0, n_head_kv_ = 0, head_dim_ = 0;
  int n_committed_ = 0;
  AlignedBuffer k_, v_;
};

}  // namespace sf
