// Row panels: a layout of a weight matrix for CPUs whose kernels put one WEIGHT row in each
// lane of a vector (quant/vnni_row_panels*-inl.h), the layout that makes one-token decode
// cheap: with GGUF's row-major blocks, a one-row dot product must reduce each block's lanes
// horizontally and gather the rows' scales, which costs more than streaming the bytes.
//
// Sixteen consecutive rows form a panel. A panel occupies exactly the bytes its 16 rows
// occupied (so row r's panel starts at data + (r / 16) * 16 * row_bytes, and the matrix's
// size, alignment and memory budget do not change); inside it, blocks are interleaved by
// column: for each block column b, one panel block (quant/row_panel_blocks.h) holds the 16
// rows' block b.
//
// Converted in place when resident weights are loaded (model/model_weights.cc), only for
// types and CPUs that have panel kernels (quant/dot_panel.h) and for row counts that are a
// multiple of 16; `specflash pack --row-panels` stores them so in the file, for streamed
// layers (model/stored_layout.h). The floats are the same either way: the kernels follow
// one per-element definition of each dot product (quant/vnni_q-inl.h for Q4_0, Q4_1, Q5_0,
// Q5_1 and Q8_0, vnni_k-inl.h for Q4_K and Q5_K, vnni_k16-inl.h for Q2_K, Q3_K and Q6_K).
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/ggml_type.h"

namespace sf {

inline constexpr int64_t kRowPanelRows = 16;
// Weight rows per call of a panel kernel (ops/matmul.cc): the 32-element formats' batch
// kernel shares each activation broadcast between three panels (quant/vnni_row_panels-inl.h).
inline constexpr int64_t kRowPanelRowsPerCall = 3 * kRowPanelRows;

// How a matrix's rows are stored: GGUF's row-major blocks, or row panels (above).
enum class WeightLayout : uint8_t { kRows, kRowPanels };

// The weight types that have a row-panel layout: every block-quantised one (Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0, Q2_K..Q6_K), not F32, F16 or BF16.
bool has_row_panel_layout(GgmlType type);

// Converts the `rows` rows (GGUF order, row_bytes(type, cols) each) at data to row panels,
// in place. rows must be a multiple of kRowPanelRows and the type one with the layout.
void pack_row_panels(GgmlType type, uint8_t* data, int64_t rows, int64_t cols);

// The inverse of pack_row_panels, in place: GGUF's rows back (a panel file read on a CPU
// without the panel kernels, model/stored_layout.h).
void unpack_row_panels(GgmlType type, uint8_t* data, int64_t rows, int64_t cols);

// Copies row r of a row-panel matrix out in GGUF order (row_bytes(type, cols) bytes), for
// the code that reads single rows (dequantising, the exit heads).
void unpack_panel_row(GgmlType type, const uint8_t* data, int64_t r, int64_t cols, uint8_t* row_out);

}  // namespace sf
