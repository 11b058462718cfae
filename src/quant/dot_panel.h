// Dot products of activation rows with a weight matrix stored in row panels
// (quant/row_panels.h), for every batch size: a DotTile whose run covers whole panels
// (n_rows a multiple of 16, weight at a panel's first byte, row_stride GGUF's row size).
// Bit-identical to DotKernel::dot of the same row in GGUF order on the same target, so the
// layout, like the batch size, never changes a float.
#pragma once

#include <cstdint>

#include "quant/dot_tile.h"
#include "quant/ggml_type.h"

namespace sf {

// The panel kernel of a (weight, activation) pair on this CPU's best instruction set: Q4_0,
// Q5_0 and Q8_0 with Q8_0 activations, Q4_1 and Q5_1 with Q8_1, Q2_K..Q6_K with Q8_K, on
// AVX3_DL (AVX512-VNNI). Empty
// elsewhere, where matrices keep GGUF's layout (ops/matmul.h, preferred_layout).
DotTile find_panel_tile(GgmlType weight_type, GgmlType activation_type);
// The same compiled for one target of dot_kernel_targets() (for tests).
DotTile find_panel_tile_for_target(GgmlType weight_type, GgmlType activation_type, int64_t target);

}  // namespace sf
