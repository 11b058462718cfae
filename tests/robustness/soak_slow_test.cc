// The soak: many thousands of tokens of speculative decoding (tree drafts from the
// stories260K draft model) with every target layer streamed from storage (budget 0%),
// compared round by round with plain decoding of the fully resident model, while the
// process's RSS is sampled. It checks three things over a long run:
//  - the speculative + streamed output equals plain decoding token for token and text for
//    text (lossless over thousands of cycles, not only over the short unit tests);
//  - drafts really were proposed and accepted;
//  - RSS does not grow: after a warm-up round (caches, ring buffers, the allocator's pools)
//    the RSS at the end is within a small margin of the RSS after warm-up.
// SPECFLASH_SOAK_TOKENS sets the total (default 20000); scripts/soak.sh runs it and prints
// the figures docs/robustness.md reports. Label: slow.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/memory_usage.h"
#include "engine/session.h"
#include "test_paths.h"

namespace sf {
namespace {

const std::vector<std::string> kPrompts = {
    "Once upon a time",
    "Lily wanted to play with her big red ball. One day",
    "The little dog was sad because",
    "Tom and Sue went to the park.",
    "One day, a bird",
    "She looked at the sky and",
    "The cat said",
    "Mom gave Ben a",
};

std::unique_ptr<Session> make(bool speculative) {
  SessionOptions o;
  o.model_path = test::source_path("models/stories260K.gguf");
  o.n_threads = 1;
  o.n_ctx = 2048;
  if (speculative) {
    o.mem_budget = *MemoryBudget::parse("0%");
    o.spec.method = SpecConfig::Method::kTree;
    o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
    o.spec.draft_len = 4;
    o.spec.tree_widths = {2, 2, 1, 1};
  }
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

struct Round {
  std::vector<int32_t> tokens;
  std::string text;
  GenerationStats stats;
};

Round run(Session& s, const std::string& prompt, int n) {
  Round r;
  auto ids = s.tokenize(prompt);
  EXPECT_TRUE(ids.ok());
  auto st = s.generate(*ids, n, SamplingParams{.temperature = 0}, /*ignore_eos=*/true,
                       [&](int32_t id, const std::string& piece) {
                         r.tokens.push_back(id);
                         r.text += piece;
                         return true;
                       });
  EXPECT_TRUE(st.ok()) << st.status().message();
  if (st.ok()) r.stats = *st;
  return r;
}

TEST(Soak, StreamedSpeculativeEqualsPlainAndRssStaysFlat) {
  const char* env = std::getenv("SPECFLASH_SOAK_TOKENS");
  const long total = env != nullptr ? std::atol(env) : 20000;
  // Short rounds: attention cost grows with the context, and what a soak needs is many
  // cycles, resets and prefix reuses, not long contexts.
  const int per_round = 300;
  auto plain = make(false);
  auto spec = make(true);
  ASSERT_TRUE(plain && spec);
  ASSERT_TRUE(spec->plan().streams());

  const auto t0 = std::chrono::steady_clock::now();
  long generated = 0;
  uint64_t cycles = 0, proposed = 0, accepted = 0, bytes_streamed = 0;
  uint64_t rss_warm = 0;
  const uint64_t rss_start = current_rss_bytes();
  int rounds = 0;
  while (generated < total) {
    const std::string& prompt = kPrompts[rounds % kPrompts.size()];
    const Round want = run(*plain, prompt, per_round);
    const Round got = run(*spec, prompt, per_round);
    ASSERT_EQ(got.tokens, want.tokens) << "round " << rounds;
    ASSERT_EQ(got.text, want.text) << "round " << rounds;
    generated += static_cast<long>(got.tokens.size());
    cycles += got.stats.spec.cycles;
    proposed += got.stats.spec.draft_tokens;
    accepted += got.stats.spec.accepted_draft_tokens;
    bytes_streamed += got.stats.counters.stream.bytes_read;
    if (++rounds == 1) rss_warm = current_rss_bytes();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t rss_end = current_rss_bytes();
  std::printf(
      "soak: rounds=%d tokens=%ld (speculative+streamed, each also decoded plainly) seconds=%.1f cycles=%llu "
      "proposed=%llu accepted=%llu streamed_bytes=%llu rss_start=%.1fMiB rss_after_round1=%.1fMiB rss_end=%.1fMiB "
      "peak=%.1fMiB\n",
      rounds, generated, seconds, static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(proposed),
      static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(bytes_streamed), rss_start / 1048576.0,
      rss_warm / 1048576.0, rss_end / 1048576.0, peak_rss_bytes() / 1048576.0);
  EXPECT_GT(proposed, 0u);
  EXPECT_GT(accepted, 0u);
  EXPECT_GT(bytes_streamed, 0u);
  // A leak of even 64 bytes per generated token would add > 1 MiB over 20000 tokens.
  EXPECT_LT(static_cast<double>(rss_end) - static_cast<double>(rss_warm), 1.0 * 1048576) << "RSS grew";
}

}  // namespace
}  // namespace sf
