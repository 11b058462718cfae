// llama.cpp's --draft-p-min and --draft-min for chain speculation (confident_chain_builder.h)
// on the real stories260K pair (target + its distilled draft, both in models/):
//  - the confidence stop shortens chains (fewer tokens proposed than the fixed chain) and a
//    minimum length makes short cycles decode without speculation (empty trees), while
//    drafts are still proposed and accepted;
//  - greedy output equals plain decoding token for token, and under sampling the first- and
//    second-token distributions match the target's (chi-square);
//  - without either setting every cycle drafts the full chain, as before.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "chi_square.h"
#include "engine/session.h"
#include "spec_test_util.h"
#include "test_paths.h"

namespace sf {
namespace {

using test::generate;
using test::target_distribution;

constexpr int kDraftLen = 4;

std::unique_ptr<Session> make_session(bool speculative, int draft_min, float p_min, int draft_len = kDraftLen) {
  SessionOptions o;
  o.model_path = test::source_path("models/stories260K.gguf");
  o.n_threads = 2;
  o.n_ctx = 256;
  if (speculative) {
    o.spec.method = SpecConfig::Method::kChain;
    o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
    o.spec.draft_len = draft_len;
    o.spec.draft_min = draft_min;
    o.spec.draft_p_min = p_min;
  }
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

const std::vector<std::string> kPrompts = {"Once upon a time", "The little dog was sad because",
                                           "Tom and Sue went to the park.", "She looked at the sky and"};

// Totals over the prompts, and how the cycles' chain lengths were distributed.
struct Totals {
  uint64_t cycles = 0, proposed = 0, accepted = 0;
  uint64_t empty = 0;   // cycles decoded without speculation
  uint64_t short_ = 0;  // cycles with 0 < chain < kDraftLen
  uint64_t full = 0;    // cycles with the whole chain
  uint64_t single = 0;  // cycles with a one-token chain
  void add(const GenerationStats& st) {
    cycles += st.spec.cycles;
    proposed += st.spec.draft_tokens;
    accepted += st.spec.accepted_draft_tokens;
    for (const CycleStats& c : st.cycles) {
      single += c.tree_nodes == 1 ? 1 : 0;
      if (c.tree_nodes == 0)
        ++empty;
      else if (c.tree_nodes < kDraftLen)
        ++short_;
      else
        ++full;
    }
  }
};

TEST(ConfidentChain, GreedyStopsEarlySkipsShortDraftsAndStaysLossless) {
  auto plain = make_session(false, 0, 0);
  auto fixed = make_session(true, 0, 0);
  auto confident = make_session(true, 0, 0.75f);
  auto with_min = make_session(true, 2, 0.75f);
  ASSERT_TRUE(plain && fixed && confident && with_min);
  SamplingParams greedy;
  greedy.temperature = 0;
  Totals t_fixed, t_confident, t_min;
  for (const auto& text : kPrompts) {
    const auto prompt = *plain->tokenize(text);
    GenerationStats st;
    const auto want = generate(*plain, prompt, 64, greedy, nullptr);
    ASSERT_EQ(generate(*fixed, prompt, 64, greedy, &st), want) << text;
    t_fixed.add(st);
    ASSERT_EQ(generate(*confident, prompt, 64, greedy, &st), want) << text;
    t_confident.add(st);
    ASSERT_EQ(generate(*with_min, prompt, 64, greedy, &st), want) << text;
    t_min.add(st);
  }
  for (const auto& [name, t] : {std::pair{"fixed", t_fixed}, {"p-min 0.75", t_confident}, {"p-min 0.75 min 2", t_min}})
    std::printf("%-17s cycles %llu proposed %llu accepted %llu; chains empty %llu short %llu full %llu\n", name,
                static_cast<unsigned long long>(t.cycles), static_cast<unsigned long long>(t.proposed),
                static_cast<unsigned long long>(t.accepted), static_cast<unsigned long long>(t.empty),
                static_cast<unsigned long long>(t.short_), static_cast<unsigned long long>(t.full));
  // Unchanged default: every cycle drafts the whole chain.
  EXPECT_EQ(t_fixed.empty + t_fixed.short_, 0u);
  // The confidence stop cut chains, proposed fewer tokens, and its drafts were accepted.
  EXPECT_GT(t_confident.short_, 0u);
  EXPECT_LT(t_confident.proposed, t_fixed.proposed);
  EXPECT_GT(t_confident.accepted, 0u);
  EXPECT_GT(static_cast<double>(t_confident.accepted) / static_cast<double>(t_confident.proposed),
            static_cast<double>(t_fixed.accepted) / static_cast<double>(t_fixed.proposed))
      << "confident drafts are accepted more often";
  // With --draft-min 2 a one-token chain is dropped: that cycle decodes without speculation.
  EXPECT_GT(t_confident.single, 0u);
  EXPECT_EQ(t_min.single, 0u);
  EXPECT_GT(t_min.empty, t_confident.empty) << "short drafts became cycles without speculation";
  EXPECT_GT(t_min.accepted, 0u);
}

// A low threshold so that under this flat sampling some chains stop early (at the root:
// cycles without speculation), some are dropped by the minimum and some are drafted whole.
void expect_sampling_lossless(int draft_min, float p_min) {
  auto plain = make_session(false, 0, 0);
  auto spec = make_session(true, draft_min, p_min, 3);
  ASSERT_TRUE(plain && spec);
  SamplingParams sp;
  sp.temperature = 1.5f;  // flat-ish, so the chi-square test has many populated categories
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  const auto prompt = *plain->tokenize("Once upon a time, there was a");
  const auto p1 = target_distribution(*plain, prompt, sp);
  const int trials = 2500;
  std::vector<double> first(p1.size(), 0.0);
  std::map<int32_t, std::vector<double>> second;
  uint64_t accepted = 0, proposed = 0, empty = 0, drafted = 0;
  for (int i = 0; i < trials; ++i) {
    sp.seed = 5000 + i;
    GenerationStats st;
    const auto out = generate(*spec, prompt, 2, sp, &st);
    ASSERT_EQ(out.size(), 2u);
    accepted += st.spec.accepted_draft_tokens;
    proposed += st.spec.draft_tokens;
    for (const CycleStats& c : st.cycles) (c.tree_nodes == 0 ? empty : drafted) += 1;
    first[out[0]] += 1;
    auto& row = second[out[0]];
    row.resize(p1.size());
    row[out[1]] += 1;
  }
  const double p_first = test::chi_square_p_value(first, p1);
  int32_t top = 0;
  for (size_t t = 0; t < first.size(); ++t)
    if (first[t] > first[top]) top = static_cast<int32_t>(t);
  std::vector<int32_t> prefix = prompt;
  prefix.push_back(top);
  const double p_second = test::chi_square_p_value(second[top], target_distribution(*plain, prefix, sp));
  std::printf("first p=%.3f second p=%.3f; cycles without speculation %llu, with a draft %llu; accepted %llu of %llu\n",
              p_first, p_second, static_cast<unsigned long long>(empty), static_cast<unsigned long long>(drafted),
              static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(proposed));
  EXPECT_GT(p_first, 1e-3) << "first-token distribution differs from the target's";
  EXPECT_GT(p_second, 1e-3) << "second-token distribution differs from the target's";
  EXPECT_GT(empty, 0u) << "some cycles must decode without speculation";
  EXPECT_GT(drafted, 0u) << "and some with a draft";
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, proposed) << "and some drafts rejected, or the residual path is untested";
}

// The stop alone keeps i.i.d. drafts (verified by rejection against q).
TEST(ConfidentChain, SampledWithConfidenceStopMatchesTheTarget) { expect_sampling_lossless(0, 0.2f); }
// With a minimum the chain holds the draft's top tokens (one-hot verification); with
// i.i.d. samples this case measured a first-token p-value of 3e-72 (biased).
TEST(ConfidentChain, SampledWithMinimumMatchesTheTarget) { expect_sampling_lossless(2, 0.2f); }

TEST(ConfidentChain, BadSettingsAreClearErrors) {
  SessionOptions o;
  o.model_path = test::source_path("models/stories260K.gguf");
  o.spec.method = SpecConfig::Method::kChain;
  o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
  o.spec.draft_len = 3;
  o.spec.draft_min = 4;
  auto s = Session::create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--draft-min"), std::string::npos) << s.status().message();
  o.spec.draft_min = 0;
  o.spec.draft_p_min = 1.5f;
  s = Session::create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--draft-p-min"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace sf
