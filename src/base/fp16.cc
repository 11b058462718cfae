#include "base/fp16.h"

#include <vector>

namespace sf {

// Branch-light conversions after the well-known technique of Maratea/Giesen: scale the
// exponent with float arithmetic so denormals and rounding come out right.
float fp16_to_fp32(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const uint32_t exp_offset = 0xE0u << 23;
  const float exp_scale = fp32_from_bits(0x7800000u);
  const float normalized = fp32_from_bits((two_w >> 4) + exp_offset) * exp_scale;
  const uint32_t magic_mask = 126u << 23;
  const float magic_bias = 0.5f;
  const float denormalized = fp32_from_bits((two_w >> 17) | magic_mask) - magic_bias;
  const uint32_t denormalized_cutoff = 1u << 27;
  const uint32_t result = sign | (two_w < denormalized_cutoff ? fp32_to_bits(denormalized) : fp32_to_bits(normalized));
  return fp32_from_bits(result);
}

uint16_t fp32_to_fp16(float f) {
  const float scale_to_inf = fp32_from_bits(0x77800000u);
  const float scale_to_zero = fp32_from_bits(0x08800000u);
  float base = (f < 0 ? -f : f) * scale_to_inf * scale_to_zero;
  const uint32_t w = fp32_to_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = fp32_from_bits((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = fp32_to_bits(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

const float* fp16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = fp16_to_fp32(static_cast<uint16_t>(i));
    return t;
  }();
  return table.data();
}

}  // namespace sf
