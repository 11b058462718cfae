#include "spec_test_util.h"

#include <gtest/gtest.h>

#include <string>

namespace sf::test {

std::vector<int32_t> generate(Session& s, const std::vector<int32_t>& prompt, int n, const SamplingParams& sp,
                              GenerationStats* stats) {
  std::vector<int32_t> out;
  auto r = s.generate(prompt, n, sp, /*ignore_eos=*/true, [&](int32_t id, const std::string&) {
    if (id >= 0) out.push_back(id);
    return true;
  });
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok() && stats) *stats = *r;
  return out;
}

std::vector<double> target_distribution(Session& plain, const std::vector<int32_t>& prompt, const SamplingParams& sp) {
  plain.reset();
  std::vector<float> logits;
  EXPECT_TRUE(plain.evaluate(prompt, false, &logits).ok());
  Sampler sampler(sp);
  std::vector<double> p(plain.model().hparams().n_vocab, 0.0);
  for (const auto& tp : sampler.distribution(logits.data(), static_cast<int>(p.size()), prompt)) p[tp.id] = tp.p;
  return p;
}

}  // namespace sf::test
