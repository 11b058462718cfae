// IEEE half and bfloat16 <-> float conversion, bit-exact with ggml's scalar paths
// (round-to-nearest-even; NaN preserved), so quantised weights decode to the same floats.
#pragma once

#include <cstdint>
#include <cstring>

namespace sf {

inline float fp32_from_bits(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
inline uint32_t fp32_to_bits(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);

inline float bf16_to_fp32(uint16_t h) { return fp32_from_bits(static_cast<uint32_t>(h) << 16); }
inline uint16_t fp32_to_bf16(float f) {
  uint32_t u = fp32_to_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 64);  // quiet NaN
  return static_cast<uint16_t>((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

// Table lookup for the hot paths (65536 entries, built once).
const float* fp16_table();
inline float fp16_to_fp32_fast(uint16_t h) { return fp16_table()[h]; }

}  // namespace sf
