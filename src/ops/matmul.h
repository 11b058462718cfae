// Matrix multiplication of a GGUF weight matrix with a small batch of activations, the
// operation that dominates every forward pass.
//
// Each output element is one dot product of a weight row with one activation row, done by
// the DotKernel for the weight's type; rows are split across the thread pool. Because an
// output depends only on its (weight row, activation row) pair, results are identical
// whatever the batch size or thread count (batch invariance: speculative verification of a
// token tree must produce the same numbers as decoding one token at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "base/thread_pool.h"
#include "quant/dot_kernel.h"
#include "quant/ggml_type.h"
#include "quant/row_panels.h"

namespace sf {

// A 2-D weight matrix in its storage type: `rows` rows of `cols` elements each.
struct WeightMatrix {
  GgmlType type = GgmlType::F32;
  int64_t cols = 0;       // input dimension (contiguous)
  int64_t rows = 0;       // output dimension
  size_t row_stride = 0;  // bytes per row (GGUF's row size, whatever the layout)
  const uint8_t* data = nullptr;
  // kRowPanels: converted at load for the one-token decode kernels (quant/row_panels.h);
  // single rows are then read with dequantize_weight_row, never through row().
  WeightLayout layout = WeightLayout::kRows;

  // Row r in GGUF order (kRows), or the first byte of row r's panel when r is a multiple of
  // 16 (kRowPanels).
  const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_stride; }
  size_t n_bytes() const { return row_stride * static_cast<size_t>(rows); }
};

// The layout matmul is fastest with on this CPU: row panels where a panel kernel exists for
// the type (every block-quantised one, on AVX512-VNNI) and rows is a multiple of 16, else
// GGUF's rows.
WeightLayout preferred_layout(GgmlType type, int64_t rows);

// Turns the panel kernels off for models loaded afterwards (preferred_layout returns rows),
// process-wide: how the tests run a row-panel file as a CPU without the kernel would, and
// how to measure the two layouts side by side. Models already loaded keep their layout.
void set_row_panel_kernels_enabled(bool enabled);

// Row r of w as floats (out: w.cols), whatever its layout.
void dequantize_weight_row(const WeightMatrix& w, int64_t r, float* out);

// Reusable scratch for quantised activations (grows on demand; one per forward pass).
class MatmulScratch {
 public:
  // The quantised activations.
  uint8_t* reserve(size_t bytes);
  // A tile kernel's own layout of them (DotTile::prepare).
  uint8_t* reserve_prepared(size_t bytes);

 private:
  std::vector<uint8_t> buf_;
  std::vector<uint8_t> prepared_;
};

// y[t, r] = sum_c w[r, c] * x[t, c] for t < n_tokens, r < w.rows.
// x: [n_tokens, w.cols] f32 (row stride x_stride floats); y: [n_tokens, w.rows] f32 (row
// stride y_stride floats). Optionally restricted to output rows [row_begin, row_end).
void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, int64_t x_stride, float* y, int64_t y_stride,
            ThreadPool& pool, MatmulScratch& scratch);

// One product of matmul_shared_input: y = w x (y row stride y_stride floats).
struct MatmulOutput {
  const WeightMatrix* w;
  float* y;
  int64_t y_stride;
};

// Several matrices over the same input, as the q/k/v and the gate/up projections are: the
// activations are quantised once, and arranged for a tile kernel once, for every matrix
// whose type takes the same format (each matrix alone gives the same floats as matmul()).
// Every w must have x's number of columns.
void matmul_shared_input(std::initializer_list<MatmulOutput> outputs, const float* x, int64_t n_tokens,
                         int64_t x_stride, ThreadPool& pool, MatmulScratch& scratch);

// Scalar reference: dequantises rows and sums in double. The oracle for tests.
void matmul_ref(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y);

// Selects the activation format for a weight type. Default is llama.cpp's choice
// (default_activation_type); tests may override.
GgmlType matmul_activation_type(GgmlType weight_type);

}  // namespace sf
