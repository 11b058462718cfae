// Byte layouts of ggml's quantised blocks, field for field, so that GGUF tensor data can be
// read in place (internal to quant/; other modules see only the functions in dequantize.h and
// dot_kernel.h). The static_asserts pin the sizes to ggml_type.cc's table. fp16 fields are raw
// IEEE half bits. Blocks are read through pointers into mmapped/streamed buffers whose rows
// start at even offsets (GGUF aligns tensor data to 32 and every row size is even).
#pragma once

#include <cstdint>
#include <cstring>

namespace sf::quant {

inline constexpr int kQK = 32;     // elements per block of the legacy formats
inline constexpr int kQK_K = 256;  // elements per K-quant super-block

struct BlockQ4_0 {
  uint16_t d;      // scale: x = d * (q - 8)
  uint8_t qs[16];  // element j in the low nibble of qs[j], element j + 16 in the high nibble
};
struct BlockQ4_1 {
  uint16_t d, m;  // x = d * q + m
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;     // x = d * (q - 16)
  uint8_t qh[4];  // bit j (little-endian uint32) = fifth bit of element j
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;  // x = d * q + m
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;  // d * sum(qs), lets the Q4_1/Q5_1 dot fold in the weight offset m
  int8_t qs[32];
};

// K-quants: a 256-element super-block split in sub-blocks with small integer scales.
struct BlockQ2_K {
  uint8_t scales[16];  // sub-block (16 elems) scale in the low nibble, min in the high nibble
  uint8_t qs[64];      // 2-bit quants, see dequantize_k.cc for the element order
  uint16_t d, dmin;
};
struct BlockQ3_K {
  uint8_t hmask[32];   // high (third) bit, set means "no -4 offset"
  uint8_t qs[64];      // low two bits
  uint8_t scales[12];  // 16 six-bit scales (offset 32)
  uint16_t d;
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];  // 8 six-bit scales and 8 six-bit mins, packed (unpack_scale_min_k4)
  uint8_t qs[128];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];    // low four bits
  uint8_t qh[64];     // high two bits
  int8_t scales[16];  // one per 16 elements
  uint16_t d;
};
struct BlockQ8_K {
  float d;  // fp32, unlike the other formats
  int8_t qs[256];
  int16_t bsums[16];  // sums of qs in groups of 16, used for the weight mins of Q2_K/Q4_K/Q5_K
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

// Q4_K/Q5_K pack 8 scales and 8 mins of 6 bits into 12 bytes: entries 0..3 use the low six
// bits of bytes 0..3 (scales) and 4..7 (mins); entries 4..7 keep their low four bits in
// bytes 8..11 and their top two bits in the spare high bits of bytes 0..7.
inline void unpack_scale_min_k4(int j, const uint8_t* q, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q3_K packs 16 six-bit scales into 12 bytes: low nibbles of scale j in byte j (j < 8, low
// nibble) or byte j - 8 (high nibble); the top two bits of scale j in byte 8 + j % 4 at bit
// 2 * (j / 4). Returns the signed scale (stored value - 32).
inline int unpack_scale_q3_k(int j, const uint8_t* s) {
  const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// All 16 of Q3_K's stored scales (0..63, unpack_scale_q3_k's value + 32) four per 32-bit
// word, for the SIMD kernels: bytes 0-7 of `low` are scales 0-7, of `high` scales 8-15.
inline void unpack_scales_q3_k_words(const uint8_t* s, uint64_t* low, uint64_t* high) {
  uint32_t a[3];
  std::memcpy(a, s, 12);
  constexpr uint32_t kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  const uint64_t r0 = (a[0] & kLow4) | ((a[2] & kLow2) << 4);
  const uint64_t r1 = (a[1] & kLow4) | (((a[2] >> 2) & kLow2) << 4);
  const uint64_t r2 = ((a[0] >> 4) & kLow4) | (((a[2] >> 4) & kLow2) << 4);
  const uint64_t r3 = ((a[1] >> 4) & kLow4) | (((a[2] >> 6) & kLow2) << 4);
  *low = r0 | (r1 << 32);
  *high = r2 | (r3 << 32);
}

// llama.cpp's round-to-nearest for the K-quant searches: adding 1.5 * 2^23 makes the FPU
// round to an integer (ties to even). Kept bit-exact so our files equal llama-quantize's.
inline int nearest_int(float fval) {
  const float val = fval + 12582912.f;
  int i;
  std::memcpy(&i, &val, sizeof(int));
  return (i & 0x007fffff) - 0x00400000;
}

}  // namespace sf::quant
