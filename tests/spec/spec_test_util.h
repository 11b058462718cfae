// Helpers the speculative model tests share: generation that collects the token ids, and
// the target's exact next-token distribution as the sampler processes it (the reference of
// every chi-square test).
#pragma once

#include <cstdint>
#include <functional>
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

// Counts per token id for the sampled losslessness tests: of the first and the last token
// of `trials` speculative generations of `length` tokens (seeds spec_seed + i), and of the
// last token of as many plain ones (seeds plain_seed + i, a stream independent of the
// speculative one's). Each trial runs the speculative generation, then the plain one;
// `each` sees every speculative generation's statistics. A generation of the wrong length
// is a test failure and ends the sampling.
struct SampledCounts {
  std::vector<double> first_spec, last_spec, last_plain;
};
SampledCounts sample_first_and_last(Session& spec, Session& plain, const std::vector<int32_t>& prompt,
                                    SamplingParams sp, int trials, int length, uint64_t spec_seed, uint64_t plain_seed,
                                    const std::function<void(const GenerationStats&)>& each);

}  // namespace sf::test
