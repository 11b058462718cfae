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

SampledCounts sample_first_and_last(Session& spec, Session& plain, const std::vector<int32_t>& prompt,
                                    SamplingParams sp, int trials, int length, uint64_t spec_seed, uint64_t plain_seed,
                                    const std::function<void(const GenerationStats&)>& each) {
  const size_t n_vocab = static_cast<size_t>(plain.model().hparams().n_vocab);
  SampledCounts c{std::vector<double>(n_vocab, 0), std::vector<double>(n_vocab, 0), std::vector<double>(n_vocab, 0)};
  for (int i = 0; i < trials; ++i) {
    sp.seed = spec_seed + static_cast<uint64_t>(i);
    GenerationStats st;
    const auto got = generate(spec, prompt, length, sp, &st);
    sp.seed = plain_seed + static_cast<uint64_t>(i);
    const auto want = generate(plain, prompt, length, sp, nullptr);
    if (got.size() != static_cast<size_t>(length) || want.size() != static_cast<size_t>(length)) {
      ADD_FAILURE() << "trial " << i << ": " << got.size() << " speculative and " << want.size()
                    << " plain tokens, not " << length;
      return c;
    }
    c.first_spec[got[0]] += 1;
    c.last_spec[got[length - 1]] += 1;
    c.last_plain[want[length - 1]] += 1;
    each(st);
  }
  return c;
}

}  // namespace sf::test
