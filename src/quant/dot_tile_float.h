// The float formats' tile table (dot_simd_float.cc), internal to quant/: find_dot_tile
// (dot_tile_q.cc) falls back to it after the legacy and K-quant tables.
#pragma once

#include <cstdint>

#include "quant/dot_tile.h"

namespace sf::quant {

// The tile of F32 x F32, F16 x F16, F16 x F32, BF16 x BF16 or BF16 x F32 compiled for
// `target` (a Highway target bit this CPU supports, or 0 for the best); empty for other pairs
// and on SCALAR.
DotTile float_dot_tile(GgmlType weight_type, GgmlType activation_type, int64_t target);

}  // namespace sf::quant
