// Counter-based random numbers for synthetic weights. Every value is a pure function of
// (seed, tensor name, element index), so a synthesised model is byte-identical whatever
// the thread count or the order in which rows are generated.
#pragma once

#include <cstdint>
#include <string_view>

namespace sf {

// SplitMix64's output function (Steele, Lea, Flood 2014): a strong 64-bit mixer.
inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The key of one tensor's stream: FNV-1a of its name, mixed with the seed.
inline uint64_t tensor_stream_key(uint64_t seed, std::string_view name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
  return mix64(h ^ mix64(seed + 0x9E3779B97F4A7C15ull));
}

// Element `index` of the stream `key`: approximately standard normal (the Irwin-Hall sum
// of four 16-bit uniforms: mean 0, variance 1, bounded by +-3.46, so no outlier can
// dominate a quantisation block the way a true Gaussian tail occasionally would).
inline float normalish(uint64_t key, uint64_t index) {
  const uint64_t r = mix64(key + (index + 1) * 0x9E3779B97F4A7C15ull);
  const uint64_t sum = (r & 0xFFFF) + ((r >> 16) & 0xFFFF) + ((r >> 32) & 0xFFFF) + (r >> 48);
  // Each 16-bit uniform has variance (65536^2 - 1) / 12; four of them sum to 4x that.
  constexpr double kMean = 4 * 65535 / 2.0;
  constexpr double kInvStd = 1.0 / 37837.22724;
  return static_cast<float>((static_cast<double>(sum) - kMean) * kInvStd);
}

}  // namespace sf
