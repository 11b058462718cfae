#include "ops/matmul.h"

#include <algorithm>
#include <atomic>

#include "base/check.h"
#include "quant/dequantize.h"
#include "quant/dot_panel.h"
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

namespace {

// What the last matrix of a shared input quantised (and prepared), for the next to reuse.
struct QuantisedInput {
  GgmlType type = GgmlType::F32;
  const uint8_t* act = nullptr;  // nullptr: nothing quantised yet
  size_t row_bytes = 0;
  decltype(DotTile::prepare) prepared_by = nullptr;
  const uint8_t* prepared = nullptr;
};

void multiply(const WeightMatrix& w, const float* x, int64_t n_tokens, int64_t x_stride, float* y, int64_t y_stride,
              ThreadPool& pool, MatmulScratch& scratch, QuantisedInput& in) {
  const GgmlType act_type = matmul_activation_type(w.type);
  const DotKernel* kernel = find_dot_kernel(w.type, act_type);
  SF_CHECK(kernel != nullptr, "no dot kernel for weight type %s", type_name(w.type));
  if (in.act == nullptr || in.type != act_type) {
    // Quantise activations once per token, shared by all rows (and the next matrices). An
    // element (a max, a scale, a rounding) is worth a few multiply-adds of work, so this
    // splits from ~128K elements, e.g. 64 tokens of the 1.1B's 2,048.
    constexpr double kQuantiseWorkPerElement = 4;
    const size_t act_row_bytes = row_bytes(act_type, w.cols);
    uint8_t* act = scratch.reserve(act_row_bytes * static_cast<size_t>(n_tokens));
    pool.parallel_for(
        n_tokens,
        [&](int64_t begin, int64_t end, int) {
          for (int64_t t = begin; t < end; ++t)
            kernel->quantize_activation(x + t * x_stride, act + static_cast<size_t>(t) * act_row_bytes, w.cols);
        },
        pool.grain_for_work(kQuantiseWorkPerElement * static_cast<double>(w.cols)));
    in = QuantisedInput{act_type, act, act_row_bytes, nullptr, nullptr};
  }
  const uint8_t* act = in.act;
  const size_t act_row_bytes = in.row_bytes;

  // Row panels always take the panel kernel, whatever the batch. Otherwise, for several
  // tokens, the tile kernel (every weight type's, on the SIMD targets) decodes or widens each
  // weight block once for a tile of tokens (under the tile's min_act_rows, its small_run when it
  // has one, else dot_rows per token). All are bit-identical to dot_rows, so neither the layout
  // nor the batch size changes a float.
  const bool panels = w.layout == WeightLayout::kRowPanels;
  DotTile tile;
  if (panels) {
    tile = find_panel_tile(w.type, act_type);
    SF_CHECK(static_cast<bool>(tile), "a %s matrix in row panels, but no panel kernel", type_name(w.type));
  } else if (n_tokens > 1) {
    tile = find_dot_tile(w.type, act_type);
    if (n_tokens < tile.min_act_rows) tile = tile.small_run ? DotTile{tile.small_run} : DotTile{};
  }
  const uint8_t* tile_act = act;
  if (tile && tile.prepare) {
    // The tile's own activation layout, made once here for every row block below.
    if (in.prepared_by != tile.prepare) {
      uint8_t* prepared = scratch.reserve_prepared(tile.prepared_bytes(n_tokens, w.cols));
      tile.prepare(act, act_row_bytes, n_tokens, w.cols, prepared);
      in.prepared_by = tile.prepare;
      in.prepared = prepared;
    }
    tile_act = in.prepared;
  }

  // Rows in blocks so a block of weights stays in cache while every token uses it; panels
  // are never split between threads.
  constexpr int64_t kRowBlock = 16;
  const int64_t unit = panels ? kRowPanelRows : 1;
  const int64_t row_block = panels ? kRowPanelRowsPerCall : kRowBlock;
  pool.parallel_for(
      w.rows / unit,
      [&](int64_t unit_begin, int64_t unit_end, int) {
        const int64_t begin = unit_begin * unit, end = unit_end * unit;
        for (int64_t r0 = begin; r0 < end; r0 += row_block) {
          const int64_t r1 = std::min(end, r0 + row_block);
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
      pool.grain_for_work(static_cast<double>(unit * w.cols * n_tokens), kRowBlock / unit));
}

}  // namespace

void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, int64_t x_stride, float* y, int64_t y_stride,
            ThreadPool& pool, MatmulScratch& scratch) {
  QuantisedInput in;
  multiply(w, x, n_tokens, x_stride, y, y_stride, pool, scratch, in);
}

void matmul_shared_input(std::initializer_list<MatmulOutput> outputs, const float* x, int64_t n_tokens,
                         int64_t x_stride, ThreadPool& pool, MatmulScratch& scratch) {
  QuantisedInput in;
  int64_t cols = -1;
  for (const MatmulOutput& o : outputs) {
    SF_CHECK(cols < 0 || o.w->cols == cols, "matmul_shared_input: matrices of %lld and %lld columns",
             static_cast<long long>(cols), static_cast<long long>(o.w->cols));
    cols = o.w->cols;
    multiply(*o.w, x, n_tokens, x_stride, o.y, o.y_stride, pool, scratch, in);
  }
}

namespace {
std::atomic<bool> g_row_panel_kernels_enabled{true};
}  // namespace

void set_row_panel_kernels_enabled(bool enabled) { g_row_panel_kernels_enabled.store(enabled); }

WeightLayout preferred_layout(GgmlType type, int64_t rows) {
  const bool panels = g_row_panel_kernels_enabled.load() && has_row_panel_layout(type) && rows % kRowPanelRows == 0 &&
                      static_cast<bool>(find_panel_tile(type, matmul_activation_type(type)));
  return panels ? WeightLayout::kRowPanels : WeightLayout::kRows;
}

void dequantize_weight_row(const WeightMatrix& w, int64_t r, float* out) {
  if (w.layout == WeightLayout::kRows) {
    dequantize_row(w.type, w.row(r), out, w.cols);
    return;
  }
  std::vector<uint8_t> row(w.row_stride);
  unpack_panel_row(w.type, w.data, r, w.cols, row.data());
  dequantize_row(w.type, row.data(), out, w.cols);
}

void matmul_ref(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_weight_row(w, r, row.data());
    for (int64_t t = 0; t < n_tokens; ++t) {
      double acc = 0;
      for (int64_t c = 0; c < w.cols; ++c) acc += static_cast<double>(row[c]) * x[t * w.cols + c];
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

}  // namespace sf
