// Helpers the speculative model tests share: generation that collects the token ids, and
// the target's exact next-token distribution as the sampler processes it (the reference of
// every chi-square test).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/session.h"

namespace sf::test {

// Generates n tokens (end of text ignored) and returns their ids; the stats when asked.
// A failed generation is a test failure (and an empty or short result).
std::vector<int32_t> generate(Session& s, const std::vector<int32_t>& prompt, int n, const SamplingParams& sp,
                              GenerationStats* stats);

// The target's exact next-token probabilities after `prompt`, as the sampler with `sp`
// processes them (temperature, top-k/p, penalties over the prompt). Resets `plain`.
std::vector<double> target_distribution(Session& plain, const std::vector<int32_t>& prompt, const SamplingParams& sp);

}  // namespace sf::test
