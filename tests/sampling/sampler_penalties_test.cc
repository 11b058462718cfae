// Presence and frequency penalties (llama.cpp's --presence-penalty, --frequency-penalty)
// and the --repeat-last-n window, checked on the processed distribution.
#include <gtest/gtest.h>

#include <cmath>

#include "sampling/sampler.h"

namespace sf {
namespace {

// p(token) under `params` with flat logits over 4 tokens.
float prob_of(const SamplingParams& params, int32_t token, const std::vector<int32_t>& history) {
  const std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
  Sampler s(params);
  for (const auto& t : s.distribution(logits.data(), 4, history))
    if (t.id == token) return t.p;
  return 0.0f;
}

SamplingParams plain() {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  return p;
}

TEST(SamplerPenalties, PresenceSubtractsOncePerToken) {
  SamplingParams p = plain();
  p.presence_penalty = 1.0f;
  // Token 0 seen three times, token 1 once: both lose exactly 1 from their logit.
  const std::vector<int32_t> history = {0, 0, 0, 1};
  const float z = 2 * std::exp(0.0f) + 2 * std::exp(1.0f);
  EXPECT_NEAR(prob_of(p, 0, history), std::exp(0.0f) / z, 1e-6);
  EXPECT_NEAR(prob_of(p, 1, history), std::exp(0.0f) / z, 1e-6);
  EXPECT_NEAR(prob_of(p, 2, history), std::exp(1.0f) / z, 1e-6);
}

TEST(SamplerPenalties, FrequencySubtractsPerOccurrence) {
  SamplingParams p = plain();
  p.frequency_penalty = 0.5f;
  const std::vector<int32_t> history = {0, 0, 0, 1};
  // Logits: token 0 -> 1 - 1.5, token 1 -> 1 - 0.5, tokens 2 and 3 -> 1.
  const float z = std::exp(-0.5f) + std::exp(0.5f) + 2 * std::exp(1.0f);
  EXPECT_NEAR(prob_of(p, 0, history), std::exp(-0.5f) / z, 1e-6);
  EXPECT_NEAR(prob_of(p, 1, history), std::exp(0.5f) / z, 1e-6);
}

TEST(SamplerPenalties, WindowLimitsWhatIsPenalised) {
  SamplingParams p = plain();
  p.presence_penalty = 2.0f;
  p.repeat_last_n = 1;  // only the last token (1) counts
  const std::vector<int32_t> history = {0, 1};
  EXPECT_NEAR(prob_of(p, 0, history), prob_of(p, 2, history), 1e-6);
  EXPECT_LT(prob_of(p, 1, history), prob_of(p, 0, history));
  p.repeat_last_n = 0;  // off
  EXPECT_NEAR(prob_of(p, 1, history), 0.25f, 1e-6);
  p.repeat_last_n = -1;  // the whole history
  EXPECT_NEAR(prob_of(p, 0, history), prob_of(p, 1, history), 1e-6);
  EXPECT_LT(prob_of(p, 0, history), prob_of(p, 2, history));
}

}  // namespace
}  // namespace sf
