#include "ops_test_util.h"

#include <random>

#include "base/fp16.h"

namespace sf::test {

std::vector<float> random_floats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<uint16_t> random_f16(size_t n, uint32_t seed, float scale) {
  const auto f = random_floats(n, seed, scale);
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(f[i]);
  return h;
}

}  // namespace sf::test
