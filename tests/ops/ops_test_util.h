// Random inputs the ops tests share: floats from a seeded normal distribution, and the same
// rounded to f16 (the KV cache's format).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sf::test {

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f);
std::vector<uint16_t> random_f16(size_t n, uint32_t seed, float scale = 1.0f);

}  // namespace sf::test
