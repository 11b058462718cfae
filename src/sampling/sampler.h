// Token sampling: logit processors (temperature, top-k, top-p, min-p, repetition, presence
// and frequency penalties over the last repeat_last_n tokens, as llama.cpp applies them)
// and a seeded RNG whose stream is fully specified (same seed, same tokens on every
// platform). temperature <= 0 means greedy: argmax, ties to the lowest id (llama.cpp's
// convention and the reference dumps').
//
// `distribution()` exposes the processed next-token distribution itself, because lossless
// speculative sampling must apply identical processing to draft and target.
// Not thread-safe (owns the RNG state).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace sf {

struct SamplingParams {
  float temperature = 0.8f;
  int top_k = 40;                  // <= 0: disabled
  float top_p = 0.95f;             // >= 1: disabled
  float min_p = 0.05f;             // <= 0: disabled
  float repeat_penalty = 1.0f;     // 1: disabled
  int repeat_last_n = 64;          // window of the penalties: 0 = off, < 0 = the whole history
  float presence_penalty = 0.0f;   // subtracted once from the logit of every token in the window
  float frequency_penalty = 0.0f;  // subtracted per occurrence in the window
  uint64_t seed = 0;
  bool greedy() const { return temperature <= 0.0f; }
};

struct TokenProb {
  int32_t id;
  float p;
};

int32_t argmax(const float* logits, int n_vocab);

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // The processed distribution over the surviving candidates, sorted by descending
  // probability (ties by ascending id), probabilities summing to 1. Greedy: one entry.
  std::vector<TokenProb> distribution(const float* logits, int n_vocab, const std::vector<int32_t>& history = {}) const;
  // Draws the next token.
  int32_t sample(const float* logits, int n_vocab, const std::vector<int32_t>& history = {});
  // A uniform double in [0, 1) from the sampler's RNG (also used by speculative verifiers).
  double uniform();
  // Picks an index from a distribution with one uniform draw.
  int32_t draw(const std::vector<TokenProb>& dist);

  const SamplingParams& params() const { return params_; }

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace sf
