// The byte layouts of row-panel blocks (quant/row_panels.h), internal to quant/. Each holds
// one block column of 16 rows in exactly the bytes of the 16 GGUF blocks it replaces, with
// every per-row field interleaved so that one 512-bit load gives each lane (row) its part.
#pragma once

#include <cstdint>

#include "quant/block_types.h"

namespace sf::quant {

// Q4_0: the 16 scales, then the quants as four groups of 64 bytes in which bytes 4j..4j+3
// of group k are row j's qs[4k..4k+3] (elements 4k..4k+3 in the low nibbles, 16+4k..19+4k
// in the high ones).
struct Q4_0PanelBlock {
  uint16_t d[16];
  uint8_t qs[4][64];
};
static_assert(sizeof(Q4_0PanelBlock) == 16 * sizeof(BlockQ4_0), "a panel block holds 16 Q4_0 blocks");

// Q8_0: the 16 scales, then the quants as eight groups of 64 bytes in which bytes 4j..4j+3
// of group k are row j's qs[4k..4k+3].
struct Q8_0PanelBlock {
  uint16_t d[16];
  uint8_t qs[8][64];
};
static_assert(sizeof(Q8_0PanelBlock) == 16 * sizeof(BlockQ8_0), "a panel block holds 16 Q8_0 blocks");

// Q4_1: the 16 scales, the 16 offsets m, then the quants as Q4_0's.
struct Q4_1PanelBlock {
  uint16_t d[16];
  uint16_t m[16];
  uint8_t qs[4][64];
};
static_assert(sizeof(Q4_1PanelBlock) == 16 * sizeof(BlockQ4_1), "a panel block holds 16 Q4_1 blocks");

// Q5_0: the 16 scales, row j's 32 fifth bits as bytes 4j..4j+3 of qh, then the quants as
// Q4_0's.
struct Q5_0PanelBlock {
  uint16_t d[16];
  uint8_t qh[64];
  uint8_t qs[4][64];
};
static_assert(sizeof(Q5_0PanelBlock) == 16 * sizeof(BlockQ5_0), "a panel block holds 16 Q5_0 blocks");

// Q5_1: Q4_1's panel block with Q5_0's fifth bits.
struct Q5_1PanelBlock {
  uint16_t d[16];
  uint16_t m[16];
  uint8_t qh[64];
  uint8_t qs[4][64];
};
static_assert(sizeof(Q5_1PanelBlock) == 16 * sizeof(BlockQ5_1), "a panel block holds 16 Q5_1 blocks");

// Q4_K: the 16 d and dmin, row j's 12 bytes of packed scales and mins as bytes 4j..4j+3 of
// scales[0..2], and its 128 quant bytes as bytes 4j..4j+3 of qs[0..31].
struct Q4_KPanelBlock {
  uint16_t d[16];
  uint16_t dmin[16];
  uint8_t scales[3][64];
  uint8_t qs[32][64];
};
static_assert(sizeof(Q4_KPanelBlock) == 16 * sizeof(BlockQ4_K), "a panel block holds 16 Q4_K blocks");

// Q5_K: Q4_K's panel block with row j's 32 fifth-bit bytes as bytes 4j..4j+3 of qh[0..7].
struct Q5_KPanelBlock {
  uint16_t d[16];
  uint16_t dmin[16];
  uint8_t scales[3][64];
  uint8_t qh[8][64];
  uint8_t qs[32][64];
};
static_assert(sizeof(Q5_KPanelBlock) == 16 * sizeof(BlockQ5_K), "a panel block holds 16 Q5_K blocks");

// Q2_K: row j's 16 scale/min bytes as bytes 4j..4j+3 of scales[0..3], its 64 quant bytes
// as those of qs[0..15], then the 16 d and dmin.
struct Q2_KPanelBlock {
  uint8_t scales[4][64];
  uint8_t qs[16][64];
  uint16_t d[16];
  uint16_t dmin[16];
};
static_assert(sizeof(Q2_KPanelBlock) == 16 * sizeof(BlockQ2_K), "a panel block holds 16 Q2_K blocks");

// Q3_K: row j's 32 high-bit bytes as bytes 4j..4j+3 of hmask[0..7], its 64 low-bit bytes
// as those of qs[0..15], its 12 bytes of packed scales as those of scales[0..2], then the
// 16 d.
struct Q3_KPanelBlock {
  uint8_t hmask[8][64];
  uint8_t qs[16][64];
  uint8_t scales[3][64];
  uint16_t d[16];
};
static_assert(sizeof(Q3_KPanelBlock) == 16 * sizeof(BlockQ3_K), "a panel block holds 16 Q3_K blocks");

// Q6_K: row j's 128 low-nibble bytes as bytes 4j..4j+3 of ql[0..31], its 64 high-bit bytes
// as those of qh[0..15], its 16 signed sub-block scales as those of scales[0..3], then the
// 16 d.
struct Q6_KPanelBlock {
  uint8_t ql[32][64];
  uint8_t qh[16][64];
  uint8_t scales[4][64];
  uint16_t d[16];
};
static_assert(sizeof(Q6_KPanelBlock) == 16 * sizeof(BlockQ6_K), "a panel block holds 16 Q6_K blocks");

}  // namespace sf::quant
