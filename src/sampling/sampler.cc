#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "ops/argmax.h"

namespace sf {

int32_t argmax(const float* logits, int n_vocab) { return argmax_f32(logits, n_vocab); }

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

double Sampler::uniform() {
  // 53 random bits -> [0, 1); std::uniform_real_distribution is not specified exactly.
  return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);
}

std::vector<TokenProb> Sampler::distribution(const float* logits, int n_vocab,
                                             const std::vector<int32_t>& history) const {
  if (params_.greedy()) return {{argmax(logits, n_vocab), 1.0f}};

  std::vector<TokenProb> c(static_cast<size_t>(n_vocab));
  for (int32_t i = 0; i < n_vocab; ++i) c[i] = {i, logits[i]};
  const bool penalize =
      params_.repeat_penalty != 1.0f || params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f;
  if (penalize && !history.empty()) {
    // A negative window (llama.cpp's -1) is the whole history.
    const size_t window = params_.repeat_last_n < 0 ? history.size() : static_cast<size_t>(params_.repeat_last_n);
    const size_t start = history.size() > window ? history.size() - window : 0;
    std::unordered_map<int32_t, int> seen;
    for (size_t i = start; i < history.size(); ++i) ++seen[history[i]];
    for (const auto& [id, count] : seen) {
      if (id < 0 || id >= n_vocab) continue;
      float& logit = c[id].p;
      logit = logit > 0 ? logit / params_.repeat_penalty : logit * params_.repeat_penalty;
      logit -= params_.presence_penalty + params_.frequency_penalty * static_cast<float>(count);
    }
  }
  auto by_logit = [](const TokenProb& a, const TokenProb& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); };
  if (params_.top_k > 0 && params_.top_k < n_vocab) {
    std::partial_sort(c.begin(), c.begin() + params_.top_k, c.end(), by_logit);
    c.resize(params_.top_k);
  } else {
    std::sort(c.begin(), c.end(), by_logit);
  }
  // Softmax with temperature (c is sorted, so c[0] holds the max).
  const float max = c[0].p;
  double sum = 0;
  for (auto& t : c) {
    t.p = std::exp((t.p - max) / params_.temperature);
    sum += t.p;
  }
  for (auto& t : c) t.p = static_cast<float>(t.p / sum);
  if (params_.min_p > 0.0f) {
    const float threshold = c[0].p * params_.min_p;
    size_t keep = 1;
    while (keep < c.size() && c[keep].p >= threshold) ++keep;
    c.resize(keep);
  }
  if (params_.top_p < 1.0f) {
    double cum = 0;
    size_t keep = 0;
    while (keep < c.size()) {
      cum += c[keep].p;
      ++keep;
      if (cum >= params_.top_p) break;
    }
    c.resize(keep);
  }
  double total = 0;
  for (const auto& t : c) total += t.p;
  for (auto& t : c) t.p = static_cast<float>(t.p / total);
  return c;
}

int32_t Sampler::draw(const std::vector<TokenProb>& dist) {
  const double u = uniform();
  double cum = 0;
  for (const auto& t : dist) {
    cum += t.p;
    if (u < cum) return t.id;
  }
  return dist.back().id;
}

int32_t Sampler::sample(const float* logits, int n_vocab, const std::vector<int32_t>& history) {
  if (params_.greedy()) return argmax(logits, n_vocab);
  return draw(distribution(logits, n_vocab, history));
}

}  // namespace sf
