#include "ops/matmul.h"

#include <algorithm>

#include "base/check.h"
#include "quant/dequantize.h"
#include "quant/dot_tile.h"

namespace sf {

uint8_t* MatmulScratch::reserve(size_t bytes) {
  if (buf_.size() < bytes) buf_.resize(bytes);
  return buf_.data();
}

uint8_t* MatmulScratch::reserve_prepared(size_t bytes) {
  if (prepared_.size() < bytes) prepared_.resize(bytes);
  return prepared_.data();
}

GgmlType matmul_activation_type(GgmlType weight_type) { return default_activation_type(weight_type); }

void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, int64_t x_stride, float* y, int64_t y_stride,
            ThreadPool& pool, MatmulScratch& scratch) {
  const GgmlType act_type = matmul_activation_type(w.type);
  const DotKernel* kernel = find_dot_kernel(w.type, act_type);
  SF_CHECK(kernel != nullptr, "no dot kernel for weight type %s", type_name(w.type));
  const size_t act_row_bytes = row_bytes(act_type, w.cols);
  uint8_t* act = scratch.reserve(act_row_bytes * static_cast<size_t>(n_tokens));

  // Quantise activations once per token, shared by all rows.
  pool.parallel_for(n_tokens, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t)
      kernel->quantize_activation(x + t * x_stride, act + static_cast<size_t>(t) * act_row_bytes, w.cols);
  });

  // Several tokens: the tile kernel (Q4_0/Q5_0/Q8_0, Q2_K..Q6_K) decodes each weight block
  // once for a tile of tokens; bit-identical to dot_rows, so the batch size still changes
  // nothing.
  DotTile tile = n_tokens > 1 ? find_dot_tile(w.type, act_type) : DotTile{};
  if (n_tokens < tile.min_act_rows) tile = DotTile{};
  const uint8_t* tile_act = act;
  if (tile && tile.prepare) {
    // The tile's own activation layout, made once here for every row block below.
    uint8_t* prepared = scratch.reserve_prepared(tile.prepared_bytes(n_tokens, w.cols));
    tile.prepare(act, act_row_bytes, n_tokens, w.cols, prepared);
    tile_act = prepared;
  }

  // Rows in blocks so a block of weights stays in cache while every token uses it.
  constexpr int64_t kRowBlock = 16;
  pool.parallel_for(
      w.rows,
      [&](int64_t begin, int64_t end, int) {
        for (int64_t r0 = begin; r0 < end; r0 += kRowBlock) {
          const int64_t r1 = std::min(end, r0 + kRowBlock);
          if (tile) {
            tile.run(w.row(r0), w.row_stride, r1 - r0, tile_act, act_row_bytes, n_tokens, w.cols, y + r0, y_stride);
            continue;
          }
          for (int64_t t = 0; t < n_tokens; ++t) {
            // dot_rows is bit-identical to dot per row, with shared activation loads and
            // row prefetching.
            kernel->dot_rows(w.row(r0), w.row_stride, r1 - r0, act + static_cast<size_t>(t) * act_row_bytes, w.cols,
                             y + t * y_stride + r0);
          }
        }
      },
      kRowBlock);
}

void matmul_ref(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.row(r), row.data(), w.cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      double acc = 0;
      for (int64_t c = 0; c < w.cols; ++c) acc += static_cast<double>(row[c]) * x[t * w.cols + c];
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

}  // namespace sf
