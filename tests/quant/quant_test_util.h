// Helpers shared by the quant/ tests: deterministic random rows and byte buffers holding
// quantised rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "quant/dequantize.h"
#include "quant/ggml_type.h"

namespace sf::test {

// Every type, in ggml_type.h order, and the ones that appear as weights.
inline const std::vector<GgmlType>& all_types() {
  static const std::vector<GgmlType> types = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                                              GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                              GgmlType::Q8_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                                              GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K};
  return types;
}

// Gaussian values with a few larger outliers, like trained weights and activations.
inline std::vector<float> random_row(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    x = normal(rng);
    if (unit(rng) < 0.01f) x *= 4.0f;
  }
  return v;
}

inline std::vector<uint8_t> quantized(GgmlType type, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> bytes(row_bytes(type, n));
  quantize_row(type, x.data(), bytes.data(), n);
  return bytes;
}

inline std::vector<float> dequantized(GgmlType type, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dequantize_row(type, bytes.data(), out.data(), n);
  return out;
}

// A float's bits, for bit-identity checks (these tell -0 from +0, unlike ==).
inline uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// sqrt(mean((a - b)^2)) / sqrt(mean(a^2)).
inline double relative_rmse(const std::vector<float>& ref, const std::vector<float>& got) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    err += d * d;
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
}

}  // namespace sf::test
