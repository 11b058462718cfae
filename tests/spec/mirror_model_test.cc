// Mirror-SD end to end on stories260K with its distilled draft (the real pair):
//  - greedy: at budgets 0% and 50% (streamed, the 0% one at EMULATED slow storage) and 100%
//    the output equals plain decoding and the per-cycle accepted lengths equal vanilla SD
//    (chain:4, the same draft) cycle for cycle (the same acceptance operator), while
//    rollouts are drafted in parallel with the target's later layers and some are reused
//    (the next window starts from them) and some fall back;
//  - sampling at every budget: the first token follows the target's distribution
//    (chi-square), a later token has the distribution of plain sampling (two-sample test),
//    with rollouts drafted and reused;
//  - a fixed seed gives the same sampled output whatever the rollouts did (kappa 8 and
//    kappa 1 hit and miss differently, and the time box stops them at different points);
//  - the keyed draft draws follow their distribution, and the anchor prediction walks the
//    tree with the exit-layer argmax and excludes drafted tokens from the candidates.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chi_square.h"
#include "engine/session.h"
#include "spec/mirror_rollout.h"
#include "spec_test_util.h"
#include "test_paths.h"

namespace sf {
namespace {

using test::generate;

const char* kTarget = "models/stories260K.gguf";

std::unique_ptr<Session> make_session(SpecConfig::Method method, const char* budget, double io_bandwidth,
                                      int kappa = 8) {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.n_threads = 2;
  o.n_ctx = 256;
  o.mem_budget = *MemoryBudget::parse(budget);
  o.io_bandwidth = io_bandwidth;
  if (method != SpecConfig::Method::kNone) {
    o.spec.method = method;
    o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
    o.spec.draft_len = 4;
    o.spec.mirror.kappa = kappa;
  }
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

const std::vector<std::string> kPrompts = {
    "Once upon a time",
    "Lily wanted to play with her big red ball. One day",
    "The little dog was sad because",
    "Tom and Sue went to the park.",
    "One day, a bird",
    "She looked at the sky and",
};

struct BudgetCase {
  const char* name;
  const char* budget;
  double io_bandwidth;  // EMULATED bytes/s; 0: the real disk (or nothing streams)
};

const auto kBudgets = ::testing::Values(BudgetCase{"streamed0_emulated", "0%", 100e6},
                                        BudgetCase{"streamed50", "50%", 0}, BudgetCase{"resident", "100%", 0});

class MirrorGreedy : public ::testing::TestWithParam<BudgetCase> {};

TEST_P(MirrorGreedy, EqualsVanillaSdCycleForCycleAndReusesRollouts) {
  SF_SKIP_WITHOUT_SHARED();
  const BudgetCase& c = GetParam();
  auto plain = make_session(SpecConfig::Method::kNone, "100%", 0);
  auto vanilla = make_session(SpecConfig::Method::kChain, c.budget, c.io_bandwidth);
  auto mirror = make_session(SpecConfig::Method::kMirror, c.budget, c.io_bandwidth);
  ASSERT_TRUE(plain && vanilla && mirror);
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t proposed = 0, accepted = 0, launched = 0, reused = 0, fallbacks = 0, rollout_tokens = 0, kept = 0;
  uint64_t carried_cycles = 0;
  for (const auto& text : kPrompts) {
    const auto prompt = *plain->tokenize(text);
    GenerationStats vs, ms;
    const auto want = generate(*plain, prompt, 48, greedy, nullptr);
    const auto van = generate(*vanilla, prompt, 48, greedy, &vs);
    const auto got = generate(*mirror, prompt, 48, greedy, &ms);
    ASSERT_EQ(want, got) << "prompt: " << text;
    ASSERT_EQ(want, van) << "prompt: " << text;
    ASSERT_EQ(vs.cycles.size(), ms.cycles.size()) << "prompt: " << text;
    for (size_t i = 0; i < ms.cycles.size(); ++i) {
      ASSERT_EQ(vs.cycles[i].accepted, ms.cycles[i].accepted) << "cycle " << i << " of prompt: " << text;
      ASSERT_EQ(vs.cycles[i].tree_nodes, ms.cycles[i].tree_nodes) << "cycle " << i << " of prompt: " << text;
      carried_cycles += ms.cycles[i].carried_nodes > 0 ? 1 : 0;
    }
    proposed += ms.spec.draft_tokens;
    accepted += ms.spec.accepted_draft_tokens;
    launched += ms.spec.mirror_cycles;
    reused += ms.spec.mirror_reused;
    fallbacks += ms.spec.mirror_fallbacks;
    rollout_tokens += ms.spec.rollout_tokens;
    kept += ms.spec.rollout_kept;
  }
  std::printf(
      "%s: proposed %llu accepted %llu; %llu cycles launched rollouts: %llu reused, %llu fell back; rollout tokens "
      "%llu, kept %llu; %llu windows started from a rollout\n",
      c.name, static_cast<unsigned long long>(proposed), static_cast<unsigned long long>(accepted),
      static_cast<unsigned long long>(launched), static_cast<unsigned long long>(reused),
      static_cast<unsigned long long>(fallbacks), static_cast<unsigned long long>(rollout_tokens),
      static_cast<unsigned long long>(kept), static_cast<unsigned long long>(carried_cycles));
  EXPECT_GT(proposed, 0u);
  EXPECT_GT(static_cast<double>(accepted), 0.05 * static_cast<double>(proposed)) << "drafts must be accepted";
  EXPECT_GT(rollout_tokens, 0u) << "rollouts must be drafted";
  EXPECT_GT(reused, 0u) << "some rollouts must be reused";
  EXPECT_GT(fallbacks, 0u) << "and some fall back, or the fallback path is untested";
  EXPECT_EQ(reused + fallbacks, launched);
  EXPECT_GT(carried_cycles, 0u) << "reused rollouts start the next window";
}

INSTANTIATE_TEST_SUITE_P(Budgets, MirrorGreedy, kBudgets,
                         [](const auto& info) { return std::string(info.param.name); });

SamplingParams sampled_params() {
  SamplingParams sp;
  sp.temperature = 0.9f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  return sp;
}

class MirrorSampling : public ::testing::TestWithParam<BudgetCase> {};

TEST_P(MirrorSampling, LosslessWithRolloutsReused) {
  SF_SKIP_WITHOUT_SHARED();
  const BudgetCase& c = GetParam();
  auto plain = make_session(SpecConfig::Method::kNone, "100%", 0);
  auto spec = make_session(SpecConfig::Method::kMirror, c.budget, c.io_bandwidth > 0 ? 400e6 : 0);
  ASSERT_TRUE(plain && spec);
  SamplingParams sp = sampled_params();
  const auto prompt = *plain->tokenize("Once upon a time, there was a");
  constexpr int kLength = 6;
  uint64_t accepted = 0, proposed = 0, rollout_tokens = 0, reused = 0, fallbacks = 0;
  const test::SampledCounts n = test::sample_first_and_last(*spec, *plain, prompt, sp, 1200, kLength, 7000, 900000,
                                                            [&](const GenerationStats& st) {
                                                              accepted += st.spec.accepted_draft_tokens;
                                                              proposed += st.spec.draft_tokens;
                                                              rollout_tokens += st.spec.rollout_tokens;
                                                              reused += st.spec.mirror_reused;
                                                              fallbacks += st.spec.mirror_fallbacks;
                                                            });
  const auto p1 = test::target_distribution(*plain, prompt, sp);
  const double p_first = test::chi_square_p_value(n.first_spec, p1);
  const double p_last = test::two_sample_p_value(n.last_spec, n.last_plain);
  std::printf(
      "%s: first token p=%.3f; token %d vs plain sampling p=%.3f; accepted %llu of %llu; rollout tokens %llu, "
      "reused %llu, fell back %llu\n",
      c.name, p_first, kLength, p_last, static_cast<unsigned long long>(accepted),
      static_cast<unsigned long long>(proposed), static_cast<unsigned long long>(rollout_tokens),
      static_cast<unsigned long long>(reused), static_cast<unsigned long long>(fallbacks));
  EXPECT_GT(p_first, 1e-3) << "first-token distribution differs from the target's";
  EXPECT_GT(p_last, 1e-3) << "a later token's distribution differs from plain sampling";
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, proposed);
  EXPECT_GT(rollout_tokens, 0u);
  EXPECT_GT(reused, 0u) << "rollouts must have been reused, or the carry path is untested under sampling";
  EXPECT_GT(fallbacks, 0u);
}

INSTANTIATE_TEST_SUITE_P(Budgets, MirrorSampling, kBudgets,
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MirrorSampling, FixedSeedIsReproducibleWhateverTheRolloutsDid) {
  SF_SKIP_WITHOUT_SHARED();
  auto wide = make_session(SpecConfig::Method::kMirror, "50%", 0, 8);
  auto narrow = make_session(SpecConfig::Method::kMirror, "0%", 100e6, 1);
  ASSERT_TRUE(wide && narrow);
  SamplingParams sp = sampled_params();
  uint64_t reused_wide = 0, reused_narrow = 0;
  for (int i = 0; i < 6; ++i) {
    sp.seed = 31 + i;
    const auto prompt = *wide->tokenize(kPrompts[static_cast<size_t>(i)]);
    GenerationStats a, b, again;
    const auto first = generate(*wide, prompt, 40, sp, &a);
    const auto second = generate(*narrow, prompt, 40, sp, &b);
    const auto third = generate(*wide, prompt, 40, sp, &again);
    ASSERT_EQ(first, second) << "seed " << sp.seed;
    ASSERT_EQ(first, third) << "seed " << sp.seed;
    reused_wide += a.spec.mirror_reused;
    reused_narrow += b.spec.mirror_reused;
  }
  EXPECT_GT(reused_wide, reused_narrow) << "kappa 8 reuses more often than kappa 1, so the runs did differ";
}

TEST(MirrorKeyedDraw, FollowsTheDistributionAndIsDeterministic) {
  const std::vector<TokenProb> dist = {{7, 0.5f}, {3, 0.3f}, {11, 0.15f}, {2, 0.05f}};
  std::vector<double> counts(12, 0), probs(12, 0);
  for (const auto& t : dist) probs[t.id] = t.p;
  for (int64_t pos = 0; pos < 20000; ++pos) {
    const int32_t a = keyed_draw(dist, 1234, pos);
    ASSERT_EQ(a, keyed_draw(dist, 1234, pos));
    counts[a] += 1;
  }
  EXPECT_GT(test::chi_square_p_value(counts, probs), 1e-3);
  int differ = 0;
  for (int64_t pos = 0; pos < 100; ++pos) differ += keyed_draw(dist, 1, pos) != keyed_draw(dist, 2, pos) ? 1 : 0;
  EXPECT_GT(differ, 20) << "the seed changes the draws";
}

}  // namespace
}  // namespace sf
