// EdgeLLM end to end on stories260K with its distilled draft (the real pair):
//  - greedy output equals plain decoding at budgets 0%, 50% (EMULATED slow storage, so the
//    target waits for weights) and 100%, drafts are proposed and accepted, and while the
//    target streams, provisional tokens are drafted during its I/O waits and some are kept
//    (they start the next tree);
//  - a drafter that carried its provisional work into the next cycle gives exactly the
//    distributions a drafter that starts afresh gives;
//  - sampling stays lossless with provisional drafting on: the first two tokens follow the
//    target's distributions (chi-square), and a later token, after cycles that carried
//    provisional tokens, has the same distribution as plain sampling (two-sample test).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "chi_square.h"
#include "engine/session.h"
#include "spec/draft_model_drafter.h"
#include "spec_test_util.h"
#include "test_paths.h"

namespace sf {
namespace {

using test::generate;

const char* kTarget = "models/stories260K.gguf";

std::string distilled_draft() { return test::source_path("models/stories260K-draft.gguf"); }

// lend_only_exposed: the default gate on lending (EdgeLlmConfig). Off in the tests of the
// mechanism: at these EMULATED rates the read-ahead hides all of the drafting, so the
// gate would lend nothing; without it the switch decides, and it lends first.
std::unique_ptr<Session> make_session(bool speculative, const char* budget, double io_bandwidth,
                                      bool provisional = true, bool lend_only_exposed = false,
                                      EdgeLlmConfig::Shape shape = EdgeLlmConfig{}.shape) {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.n_threads = 2;
  o.n_ctx = 256;
  o.mem_budget = *MemoryBudget::parse(budget);
  o.io_bandwidth = io_bandwidth;
  if (speculative) {
    o.spec.method = SpecConfig::Method::kEdgeLlm;
    o.spec.draft_model_path = distilled_draft();
    o.spec.max_tree_nodes = 32;
    o.spec.edgellm.provisional = provisional;
    o.spec.edgellm.lend_only_exposed = lend_only_exposed;
    o.spec.edgellm.shape = shape;
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
  double io_bandwidth;                                 // EMULATED bytes/s; 0: the real disk (or nothing streams)
  EdgeLlmConfig::Shape shape = EdgeLlmConfig{}.shape;  // the default: the most likely node
  bool streams() const { return std::string(budget) != "100%"; }
};

class EdgeLlmGreedy : public ::testing::TestWithParam<BudgetCase> {};

TEST_P(EdgeLlmGreedy, EqualsPlainDecodingAndKeepsProvisionalTokens) {
  SF_SKIP_WITHOUT_SHARED();
  const BudgetCase& c = GetParam();
  auto plain = make_session(false, "100%", 0);
  auto spec = make_session(true, c.budget, c.io_bandwidth, true, false, c.shape);
  ASSERT_TRUE(plain && spec);
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t proposed = 0, accepted = 0, provisional = 0, kept = 0, carried_cycles = 0;
  double alpha_min = 1, alpha_max = 0;
  for (const auto& text : kPrompts) {
    const auto prompt = *plain->tokenize(text);
    GenerationStats st;
    const auto want = generate(*plain, prompt, 48, greedy, nullptr);
    const auto got = generate(*spec, prompt, 48, greedy, &st);
    ASSERT_EQ(want, got) << "prompt: " << text;
    proposed += st.spec.draft_tokens;
    accepted += st.spec.accepted_draft_tokens;
    provisional += st.spec.provisional_tokens;
    kept += st.spec.provisional_kept;
    for (const CycleStats& cs : st.cycles) {
      carried_cycles += cs.carried_nodes > 0 ? 1 : 0;
      alpha_min = std::min(alpha_min, cs.threshold);
      alpha_max = std::max(alpha_max, cs.threshold);
    }
  }
  std::printf(
      "%s: proposed %llu accepted %llu provisional %llu kept %llu, %llu cycles began with carried nodes, "
      "alpha %.3g..%.3g\n",
      c.name, static_cast<unsigned long long>(proposed), static_cast<unsigned long long>(accepted),
      static_cast<unsigned long long>(provisional), static_cast<unsigned long long>(kept),
      static_cast<unsigned long long>(carried_cycles), alpha_min, alpha_max);
  EXPECT_GT(proposed, 0u);
  EXPECT_GT(static_cast<double>(accepted), 0.05 * static_cast<double>(proposed)) << "drafts must be accepted";
  EXPECT_LT(alpha_min, alpha_max) << "alpha adapts";
  if (!c.streams()) {
    EXPECT_EQ(provisional, 0u) << "nothing streams, so the target never waits and lends no time";
  } else {
    EXPECT_GT(provisional, 0u) << "provisional tokens must be drafted during the target's I/O waits";
    EXPECT_GT(kept, 0u) << "and some kept";
    EXPECT_GT(carried_cycles, 0u) << "kept tokens start the next tree";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Budgets, EdgeLlmGreedy,
    ::testing::Values(BudgetCase{"streamed0_emulated", "0%", 100e6}, BudgetCase{"streamed50_emulated", "50%", 50e6},
                      BudgetCase{"resident", "100%", 0},
                      BudgetCase{"streamed0_emulated_paced_shape", "0%", 100e6, EdgeLlmConfig::Shape::kPaced}),
    [](const auto& info) { return std::string(info.param.name); });

// With the default gate, a session whose drafting the read-ahead hides lends nothing: a
// carried chain would save only drafting that costs no time (0% at EMULATED 100 MB/s,
// where a pass waits ~10 ms on reads and a cycle drafts for well under one).
// The gate reads the cycles' timings: with another test busy on both cores, a draft
// thread descheduled for a few milliseconds does run past the read-ahead (once in ~20
// suite runs a session lent 69 tokens and cycles), so of up to three fresh sessions one
// must lend nothing. With the gate off every session lends (the switch lends first).
TEST(EdgeLlmLending, NothingIsLentWhereTheReadAheadHidesTheDrafting) {
  SF_SKIP_WITHOUT_SHARED();
  auto plain = make_session(false, "100%", 0);
  ASSERT_TRUE(plain);
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t accepted = 0, provisional = 0, cycles = 0;
  for (int attempt = 0; attempt < 3 && (attempt == 0 || provisional > 0); ++attempt) {
    auto spec = make_session(true, "0%", 100e6, /*provisional=*/true, /*lend_only_exposed=*/true);
    ASSERT_TRUE(spec);
    accepted = provisional = cycles = 0;
    for (size_t i = 0; i < 2; ++i) {
      const auto prompt = *plain->tokenize(kPrompts[i]);
      GenerationStats st;
      ASSERT_EQ(generate(*plain, prompt, 48, greedy, nullptr), generate(*spec, prompt, 48, greedy, &st));
      accepted += st.spec.accepted_draft_tokens;
      provisional += st.spec.provisional_tokens + st.spec.provisional_cycles;
      cycles += st.spec.cycles;
    }
  }
  EXPECT_GT(accepted, 0u) << "drafts were proposed and accepted";
  EXPECT_GT(cycles, 10u);
  EXPECT_EQ(provisional, 0u) << "no cycle lent the target's waits";
}

TEST(EdgeLlmCarry, CarriedDraftsEqualFreshDrafting) {
  SF_SKIP_WITHOUT_SHARED();
  auto target_file = Session::create([] {
    SessionOptions o;
    o.model_path = test::shared_path(kTarget);
    o.n_ctx = 64;
    return o;
  }());
  ASSERT_TRUE(target_file.ok());
  ThreadPool pool(2);
  const Tokenizer& vocab = (*target_file)->tokenizer();
  const int n_vocab = (*target_file)->model().hparams().n_vocab;
  auto carrying = DraftModelDrafter::create(distilled_draft(), vocab, n_vocab, pool, 64);
  auto fresh = DraftModelDrafter::create(distilled_draft(), vocab, n_vocab, pool, 64);
  ASSERT_TRUE(carrying.ok() && fresh.ok());
  SamplingParams greedy;
  greedy.temperature = 0;
  Sampler sampler(greedy);
  const std::vector<int32_t> prompt = *(*target_file)->tokenize("Once upon a time");

  // Cycle 1 of the carrying drafter: a chain of 5 drafted greedily below the root, as the
  // provisional worker would draft it. The target accepts the first 2 nodes and its bonus
  // token is the third node's, so the chain's 4th and 5th nodes are carried.
  (*carrying)->reset(prompt);
  std::vector<int32_t> history = prompt;
  ASSERT_TRUE((*carrying)->begin_cycle(history, greedy, sampler).ok());
  TokenTree tree;
  std::vector<NodeDistribution> out;
  int32_t node = TokenTree::kRoot;
  std::vector<NodeDistribution> chain_dists;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE((*carrying)->draft(tree, {node}, &out).ok());
    ASSERT_EQ(out.size(), 1u);
    chain_dists.push_back(out[0]);
    node = tree.add(out[0].probs[0].id, node, out[0].probs[0].p);
  }
  std::vector<int32_t> old_of_new;
  const TokenTree next = tree.subtree_below(2, &old_of_new);
  ASSERT_EQ(next.size(), 2);
  ASSERT_TRUE((*carrying)->commit_carry(tree, {0, 1}, 2, next, old_of_new));
  for (int32_t n : {0, 1, 2}) history.push_back(tree.node(n).token);
  ASSERT_TRUE((*carrying)->begin_cycle(history, greedy, sampler).ok());
  EXPECT_TRUE((*carrying)->drafted(TokenTree::kRoot));
  EXPECT_TRUE((*carrying)->drafted(0));
  EXPECT_FALSE((*carrying)->drafted(1));
  // Extend the carried chain's leaf, and open a sibling at the root.
  TokenTree grown = next;
  const int32_t sibling = grown.add(chain_dists[3].probs[1].id, TokenTree::kRoot, chain_dists[3].probs[1].p);
  std::vector<NodeDistribution> carried_out;
  ASSERT_TRUE((*carrying)->draft(grown, {1, sibling}, &carried_out).ok());
  ASSERT_EQ(carried_out.size(), 2u);

  // The fresh drafter sees the committed sequence and drafts the same nodes from scratch.
  (*fresh)->reset(history);
  ASSERT_TRUE((*fresh)->begin_cycle(history, greedy, sampler).ok());
  std::vector<NodeDistribution> root, below;
  ASSERT_TRUE((*fresh)->draft(grown, {TokenTree::kRoot}, &root).ok());
  ASSERT_TRUE((*fresh)->draft(grown, {0}, &below).ok());
  std::vector<NodeDistribution> fresh_out;
  ASSERT_TRUE((*fresh)->draft(grown, {1, sibling}, &fresh_out).ok());
  ASSERT_EQ(fresh_out.size(), 2u);
  // What the worker drafted ahead equals what the fresh drafter computes now.
  auto expect_same = [](const NodeDistribution& a, const NodeDistribution& b, const char* what) {
    ASSERT_EQ(a.probs.size(), b.probs.size()) << what;
    for (size_t k = 0; k < a.probs.size(); ++k) {
      EXPECT_EQ(a.probs[k].id, b.probs[k].id) << what << " rank " << k;
      EXPECT_NEAR(a.probs[k].p, b.probs[k].p, 1e-5) << what << " rank " << k;
    }
  };
  expect_same(chain_dists[3], root[0], "the carried root");
  expect_same(chain_dists[4], below[0], "the carried node");
  expect_same(carried_out[0], fresh_out[0], "below the carried leaf");
  expect_same(carried_out[1], fresh_out[1], "below a new sibling");
}

// Sampled decoding is lossless at every budget, with provisional drafting on: where the
// target streams, the worker drafts during its waits and some of what it drafts is kept.
class EdgeLlmSampling : public ::testing::TestWithParam<BudgetCase> {};

TEST_P(EdgeLlmSampling, LosslessWithProvisionalDrafting) {
  SF_SKIP_WITHOUT_SHARED();
  const BudgetCase& c = GetParam();
  auto plain = make_session(false, "100%", 0);
  auto spec = make_session(true, c.budget, c.io_bandwidth, true, false, c.shape);
  ASSERT_TRUE(plain && spec);
  SamplingParams sp;
  sp.temperature = 0.9f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  const auto prompt = *plain->tokenize("Once upon a time, there was a");
  constexpr int kLength = 6;
  uint64_t accepted = 0, proposed = 0, provisional = 0, kept = 0;
  const test::SampledCounts n = test::sample_first_and_last(*spec, *plain, prompt, sp, 1500, kLength, 5000, 900000,
                                                            [&](const GenerationStats& st) {
                                                              accepted += st.spec.accepted_draft_tokens;
                                                              proposed += st.spec.draft_tokens;
                                                              provisional += st.spec.provisional_tokens;
                                                              kept += st.spec.provisional_kept;
                                                            });
  // The first token against the exact distribution.
  const auto p1 = test::target_distribution(*plain, prompt, sp);
  const double p_first = test::chi_square_p_value(n.first_spec, p1);
  const double p_last = test::two_sample_p_value(n.last_spec, n.last_plain);
  std::printf(
      "%s: first token p=%.3f; token %d vs plain sampling p=%.3f; accepted %llu of %llu, provisional %llu kept %llu\n",
      c.name, p_first, kLength, p_last, static_cast<unsigned long long>(accepted),
      static_cast<unsigned long long>(proposed), static_cast<unsigned long long>(provisional),
      static_cast<unsigned long long>(kept));
  EXPECT_GT(p_first, 1e-3) << "first-token distribution differs from the target's";
  EXPECT_GT(p_last, 1e-3) << "a later token's distribution differs from plain sampling";
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, proposed);
  if (!c.streams()) {
    EXPECT_EQ(provisional, 0u) << "nothing streams, so nothing is lent";
  } else {
    EXPECT_GT(kept, 0u) << "provisional tokens must have been kept, or the carry path is untested";
  }
}

INSTANTIATE_TEST_SUITE_P(Budgets, EdgeLlmSampling,
                         ::testing::Values(BudgetCase{"streamed0_emulated", "0%", 400e6},
                                           BudgetCase{"streamed50_emulated", "50%", 200e6},
                                           BudgetCase{"resident", "100%", 0}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace sf
