// What the decode rate counts: tokens produced by decoding passes over the time of those
// passes. Plain and speculative decoding sample the first token from the prefill's logits
// (speculative decoding since 2026-12-07: before, its prefill stopped one token short and its
// first cycle's pass produced the first token(s), one target pass more per generation).
// CATS and Kangaroo likewise, since the same day.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/session.h"
#include "test_paths.h"

namespace sf {
namespace {

GenerationStats generate_with(SpecConfig::Method method, int n_tokens) {
  SessionOptions o;
  o.model_path = test::source_path("models/stories260K.gguf");
  o.n_threads = 1;
  o.n_ctx = 128;
  o.spec.method = method;
  if (method != SpecConfig::Method::kNone && method != SpecConfig::Method::kCats) {
    o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
    o.spec.draft_len = 4;
  }
  auto session = Session::create(o);
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return {};
  const auto prompt = *(*session)->tokenize("Once upon a time");
  SamplingParams greedy;
  greedy.temperature = 0;
  auto stats = (*session)->generate(prompt, n_tokens, greedy, /*ignore_eos=*/true,
                                    [](int32_t, const std::string&) { return true; });
  EXPECT_TRUE(stats.ok()) << stats.status().message();
  return stats.ok() ? *stats : GenerationStats{};
}

TEST(DecodeAccounting, PlainDecodingsFirstTokenComesFromThePrefill) {
  const GenerationStats st = generate_with(SpecConfig::Method::kNone, 16);
  ASSERT_EQ(st.generated_tokens, 16);
  EXPECT_TRUE(st.first_token_from_prefill);
  EXPECT_EQ(st.decode_tokens(), 15);
  EXPECT_DOUBLE_EQ(st.decode_tokens_per_s(), 15 / st.decode_seconds);
}

TEST(DecodeAccounting, SpeculativeDecodingsFirstTokenComesFromThePrefill) {
  const GenerationStats st = generate_with(SpecConfig::Method::kChain, 16);
  ASSERT_EQ(st.generated_tokens, 16);
  EXPECT_TRUE(st.first_token_from_prefill);
  EXPECT_EQ(st.decode_tokens(), 15);
  // The other 15 came out of cycles: their accepted drafts and bonus tokens cover them (the
  // last cycle may emit more than n_predict needs).
  EXPECT_GE(st.spec.accepted_draft_tokens + st.spec.cycles, 15u);
  EXPECT_GT(st.spec.accepted_draft_tokens, 0u) << "the chain's drafts were accepted";
  EXPECT_DOUBLE_EQ(st.decode_tokens_per_s(), 15 / st.decode_seconds);
  // The target ran the prompt once (a prefill to its last token) and one pass per cycle:
  // passes = 1 + cycles, as plain decoding's are 1 + (tokens - 1).
  EXPECT_EQ(st.counters.forward_passes, 1 + st.spec.cycles);
}

TEST(DecodeAccounting, CatsFirstTokenComesFromThePrefillToo) {
  const GenerationStats st = generate_with(SpecConfig::Method::kCats, 16);
  ASSERT_EQ(st.generated_tokens, 16);
  EXPECT_TRUE(st.first_token_from_prefill);
  EXPECT_EQ(st.decode_tokens(), 15);
  EXPECT_GT(st.spec.cycles, 0u);
  EXPECT_GE(st.spec.accepted_draft_tokens + st.spec.cycles, 15u);
}

TEST(DecodeAccounting, OneTokenIsThePrefillsAlone) {
  const GenerationStats st = generate_with(SpecConfig::Method::kChain, 1);
  ASSERT_EQ(st.generated_tokens, 1);
  EXPECT_EQ(st.spec.cycles, 0u) << "no cycle: the prefill's logits gave the only token";
}

}  // namespace
}  // namespace sf
