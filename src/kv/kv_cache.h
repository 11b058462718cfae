// KvCache: the keys and values of one model, per layer, one row per cell.
//
// A cell holds the K and V of one token at one position. Plain decoding appends cells in
// order; speculative verification (later) writes tree nodes into cells after the committed
// prefix, then keeps the accepted path by copying it into place (commit) and forgetting the
// rest (truncate). Storage is IEEE half, like llama.cpp's default cache type.
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
  KvCache(int n_layer, int n_ctx, int kv_dim);

  int n_layer() const { return n_layer_; }
  int n_ctx() const { return n_ctx_; }
  int kv_dim() const { return kv_dim_; }
  size_t bytes() const { return k_.size() + v_.size(); }
  static size_t bytes_for(int n_layer, int n_ctx, int kv_dim) {
    return 2ull * n_layer * n_ctx * kv_dim * sizeof(uint16_t);
  }

  uint16_t* k(int layer, int cell) { return k_.as<uint16_t>() + offset(layer, cell); }
  uint16_t* v(int layer, int cell) { return v_.as<uint16_t>() + offset(layer, cell); }
  const uint16_t* k(int layer, int cell) const { return k_.as<uint16_t>() + offset(layer, cell); }
  const uint16_t* v(int layer, int cell) const { return v_.as<uint16_t>() + offset(layer, cell); }

  // Number of cells holding committed tokens (the prefix every later batch attends to).
  int n_committed() const { return n_committed_; }
  void set_committed(int n);
  // Moves cell `from` to cell `to` in every layer (used to compact an accepted tree path).
  void move_cell(int from, int to);

 private:
  size_t offset(int layer, int cell) const { return (static_cast<size_t>(layer) * n_ctx_ + cell) * kv_dim_; }
  int n_layer_ = 0, n_ctx_ = 0, kv_dim_ = 0;
  int n_committed_ = 0;
  AlignedBuffer k_, v_;
};

}  // namespace sf
