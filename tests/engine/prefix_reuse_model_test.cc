// Session::generate reuses the K/V of the longest prompt prefix still in the cache (a chat
// turn computes only the new message) and the output is exactly what a fresh session gives.
#include <gtest/gtest.h>

#include <vector>

#include "engine/session.h"
#include "test_paths.h"

namespace sf {
namespace {

std::unique_ptr<Session> make(bool speculative) {
  SessionOptions o;
  o.model_path = test::shared_path("models/stories260K.gguf");
  o.n_ctx = 256;
  if (speculative) {
    o.spec.method = SpecConfig::Method::kChain;
    o.spec.draft_model_path = o.model_path;
    o.spec.draft_len = 3;
  }
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(*s);
}

std::vector<int32_t> run(Session& s, const std::vector<int32_t>& prompt, GenerationStats* stats) {
  SamplingParams greedy;
  greedy.temperature = 0;
  std::vector<int32_t> out;
  auto r = s.generate(prompt, 16, greedy, true, [&](int32_t id, const std::string&) {
    if (id >= 0) out.push_back(id);
    return true;
  });
  EXPECT_TRUE(r.ok());
  if (r.ok()) *stats = *r;
  return out;
}

class PrefixReuse : public ::testing::TestWithParam<bool> {};

TEST_P(PrefixReuse, SecondTurnReusesCacheAndMatchesFreshSession) {
  auto s = make(GetParam());
  const auto first_prompt = *s->tokenize("Once upon a time");
  GenerationStats st;
  const auto first = run(*s, first_prompt, &st);
  EXPECT_EQ(st.reused_prompt_tokens, 0);

  // The next turn: everything so far plus a new message.
  std::vector<int32_t> second_prompt = first_prompt;
  second_prompt.insert(second_prompt.end(), first.begin(), first.end());
  const auto more = *s->tokenizer().encode(" The dog said", false, false);
  second_prompt.insert(second_prompt.end(), more.begin(), more.end());
  const auto reused_out = run(*s, second_prompt, &st);
  // All but the last generated token were evaluated by the target last turn.
  EXPECT_GE(st.reused_prompt_tokens, static_cast<int>(first_prompt.size() + first.size()) - 1);

  auto fresh = make(GetParam());
  GenerationStats fresh_st;
  EXPECT_EQ(run(*fresh, second_prompt, &fresh_st), reused_out);
  EXPECT_EQ(fresh_st.reused_prompt_tokens, 0);

  // A prompt that diverges after the BOS token reuses only that.
  const auto other = *s->tokenize("Tom had a red car");
  const auto other_out = run(*s, other, &st);
  EXPECT_EQ(st.reused_prompt_tokens, 1);
  auto fresh2 = make(GetParam());
  EXPECT_EQ(run(*fresh2, other, &fresh_st), other_out);
}

INSTANTIATE_TEST_SUITE_P(PlainAndSpeculative, PrefixReuse, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "speculative" : "plain"); });

}  // namespace
}  // namespace sf
