// The K-quant tile table (dot_tile_k.cc), internal to quant/: find_dot_tile (dot_tile_q.cc)
// falls back to it for pairs the legacy table does not have.
#pragma once

#include <cstdint>

#include "quant/dot_tile.h"

namespace sf::quant {

// The tile of a K-quant weight type with Q8_K activations compiled for `target` (a Highway
// target bit this CPU supports, or 0 for the best); empty for other pairs and on SCALAR.
DotTile k_dot_tile(GgmlType weight_type, GgmlType activation_type, int64_t target);

}  // namespace sf::quant
