// The byte layout of one row-panel block (quant/row_panels.h), internal to quant/.
#pragma once

#include <cstdint>

namespace sf::quant {

// Block column b of 16 rows of a Q4_0 matrix: the 16 scales, then the quants as four groups
// of 64 bytes in which bytes 4j..4j+3 of group k are row j's qs[4k..4k+3], so one 512-bit
// load gives each lane (row) four bytes, i.e. elements 4k..4k+3 in the low nibbles and
// 16+4k..16+4k+3 in the high ones. 288 bytes: exactly the 16 GGUF blocks it replaces.
struct Q4_0PanelBlock {
  uint16_t d[16];
  uint8_t qs[4][64];
};
static_assert(sizeof(Q4_0PanelBlock) == 16 * 18, "a panel block holds 16 Q4_0 blocks");

}  // namespace sf::quant
