// End-to-end speculative decoding on the real stories260K model.
//  - Greedy: output equals plain decoding token for token for every policy, draft and
//    budget, over many prompts, and drafts were accepted (with draft = target, all of them).
//  - Sampling: the empirical first- and second-token distributions match the target's
//    (chi-square, fixed seeds), for chain and tree drafts.
//  - Bad input: mismatched vocabularies, zero or absurd gamma/tree sizes, a draft larger
//    than the budget are clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "chi_square.h"
#include "engine/session.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "sanitizer_build.h"
#include "spec/exit_scorer.h"
#include "spec_test_util.h"
#include "test_paths.h"

namespace sf {
namespace {

using test::target_distribution;

const char* kTarget = "models/stories260K.gguf";

// A quantised copy of the target as the draft, made once per test binary.
std::string quantized_draft(const char* type) {
  const std::string dir = test::scratch_dir(std::string("spec_draft_") + type);
  const std::string out = dir + "/draft.gguf";
  const std::string cmd = test::binary_path("specflash") + " quantize " + test::shared_path(kTarget) + " " + out + " " +
                          type + " -q > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return out;
}

// Pruning settings that really prune on stories260K's small trees: a high theta, one
// child kept at the root and no minimum share (the safeguards still keep the backbone).
PruneConfig aggressive_pruning() {
  PruneConfig p;
  p.enabled = true;
  p.exit_layer = 2;
  p.theta = 0.6f;
  p.root_keep = 1;
  p.min_keep_share = 0.0f;
  return p;
}

// io_bandwidth > 0 EMULATES slow storage: a streamed pass then has a large fixed cost, so
// LEVER grows its trees to the cap whatever the timing noise (a pruning test needs trees).
std::unique_ptr<Session> make_session(const std::string& draft, SpecConfig::Method method, int draft_len,
                                      std::vector<int> widths, const char* budget, bool prune = false,
                                      double io_bandwidth = 0) {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.n_threads = 2;
  o.n_ctx = 256;
  o.mem_budget = *MemoryBudget::parse(budget);
  o.io_bandwidth = io_bandwidth;
  if (!draft.empty()) {
    o.spec.method = method;
    o.spec.draft_model_path = draft;
    o.spec.draft_len = draft_len;
    o.spec.tree_widths = std::move(widths);
    o.spec.node_budget = 12;
    o.spec.max_tree_nodes = 24;
    if (prune) o.spec.prune = aggressive_pruning();
  }
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<int32_t> generate(Session& s, const std::string& prompt, int n, const SamplingParams& sp,
                              GenerationStats* stats) {
  std::vector<int32_t> out;
  auto tokens = s.tokenize(prompt);
  EXPECT_TRUE(tokens.ok());
  auto r = s.generate(*tokens, n, sp, /*ignore_eos=*/true, [&](int32_t id, const std::string&) {
    if (id >= 0) out.push_back(id);
    return true;
  });
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok() && stats) *stats = *r;
  return out;
}

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

// A different model with the same vocabulary: the target's first `layers` layers alone
// (a 3-layer stories model; no other pretrained model shares its vocabulary here).
std::string truncated_draft(int layers) {
  const std::string dir = test::scratch_dir("spec_draft_truncated");
  const std::string out = dir + "/draft.gguf";
  auto file = gguf::GgufFile::open(test::shared_path(kTarget));
  EXPECT_TRUE(file.ok());
  gguf::GgufWriter w;
  w.copy_metadata_from(*file);
  w.set("llama.block_count", gguf::Value::u32(static_cast<uint32_t>(layers)));
  for (const auto& t : file->tensors()) {
    if (t.name.rfind("blk.", 0) == 0 && std::stoi(t.name.substr(4)) >= layers) continue;
    w.add_tensor(t.name, t.type, t.dims, *file->read_tensor_data(t));
  }
  EXPECT_TRUE(w.write(out).ok());
  return out;
}

struct GreedyCase {
  const char* name;
  const char* draft;  // "target", "truncated", or a quantisation type of the target
  SpecConfig::Method method;
  int draft_len;
  std::vector<int> widths;
  const char* budget;
  // Share of proposed tokens that must be accepted. Copies of the target agree often
  // (> 75% measured); the truncated 3-layer model is a weak draft (~7% measured).
  double min_accept_rate = 0.10;
  bool prune = false;       // lever: early-exit pruning
  double io_bandwidth = 0;  // EMULATED storage rate (bytes/s); with pruning, rows must be dropped
};

class GreedyLossless : public ::testing::TestWithParam<GreedyCase> {};

TEST_P(GreedyLossless, EqualsPlainDecodingAndAcceptsDrafts) {
  const GreedyCase& c = GetParam();
  const std::string kind = c.draft;
  const std::string draft = kind == "target"      ? test::shared_path(kTarget)
                            : kind == "truncated" ? truncated_draft(3)
                            : kind == "distilled" ? test::source_path("models/stories260K-draft.gguf")
                                                  : quantized_draft(c.draft);
  auto plain = make_session("", SpecConfig::Method::kNone, 0, {}, "100%");
  auto spec = make_session(draft, c.method, c.draft_len, c.widths, c.budget, c.prune, c.io_bandwidth);
  ASSERT_TRUE(plain && spec);
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t proposed = 0, accepted = 0, cycles = 0, pruned = 0, largest = 0;
  for (const auto& prompt : kPrompts) {
    GenerationStats st;
    const auto want = generate(*plain, prompt, 48, greedy, nullptr);
    const auto got = generate(*spec, prompt, 48, greedy, &st);
    ASSERT_EQ(want, got) << "prompt: " << prompt;
    proposed += st.spec.draft_tokens;
    accepted += st.spec.accepted_draft_tokens;
    cycles += st.spec.cycles;
    pruned += st.spec.rows_pruned;
    largest = std::max(largest, st.spec.max_tree_nodes);
    if (std::string(c.budget) != "100%") {
      EXPECT_GT(st.counters.stream.bytes_read, 0u);
    }
  }
  std::printf("%s: proposed %llu accepted %llu cycles %llu rows pruned %llu largest tree %llu\n", c.name,
              static_cast<unsigned long long>(proposed), static_cast<unsigned long long>(accepted),
              static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(pruned),
              static_cast<unsigned long long>(largest));
  // Without emulated I/O LEVER's trees follow measured timings (often 1-2 nodes on this
  // tiny model, which the safeguards never prune); with it they are large.
  if (c.prune && c.io_bandwidth > 0) {
    EXPECT_GT(pruned, 0u) << "pruning must have dropped rows";
  }
  if (!c.prune) {
    EXPECT_EQ(pruned, 0u);
  }
  if (c.method == SpecConfig::Method::kOptTree) {
    EXPECT_EQ(largest, 12u) << "opt-tree fills its node budget";
  }
  EXPECT_GT(proposed, 0u);
  EXPECT_GT(static_cast<double>(accepted), c.min_accept_rate * static_cast<double>(proposed))
      << "drafts must be accepted";
  if (std::string(c.draft) == "target" && !c.prune) {
    if (c.method == SpecConfig::Method::kChain) {
      EXPECT_EQ(accepted, proposed) << "a draft identical to the target is always right";
    } else if (c.method == SpecConfig::Method::kTree) {
      // In a tree only one path can be accepted, and with draft = target it is always the
      // full depth (except where generation stops inside a cycle).
      EXPECT_GE(accepted, (cycles - kPrompts.size()) * static_cast<uint64_t>(c.widths.size()));
    }
  }
}

using M = SpecConfig::Method;
INSTANTIATE_TEST_SUITE_P(
    Policies, GreedyLossless,
    ::testing::Values(
        GreedyCase{"chain_target", "target", M::kChain, 4, {}, "100%"},
        GreedyCase{"tree_target", "target", M::kTree, 3, {2, 2, 1}, "100%"},
        GreedyCase{"chain_q8_streamed0", "Q8_0", M::kChain, 5, {}, "0%"},
        GreedyCase{"chain_q4_streamed50", "Q4_0", M::kChain, 3, {}, "50%"},
        GreedyCase{"tree_q4", "Q4_0", M::kTree, 3, {3, 2, 1}, "100%"},
        GreedyCase{"tree_q4_streamed0", "Q4_0", M::kTree, 4, {2, 2, 1, 1}, "0%"},
        GreedyCase{"chain_target_streamed0", "target", M::kChain, 6, {}, "0%"},
        GreedyCase{"chain_other_model", "truncated", M::kChain, 4, {}, "100%", 0.03},
        GreedyCase{"tree_other_model_streamed50", "truncated", M::kTree, 3, {2, 2, 1}, "50%", 0.03},
        GreedyCase{"opt_tree_q4_streamed0", "Q4_0", M::kOptTree, 4, {}, "0%"},
        GreedyCase{"opt_tree_distilled", "distilled", M::kOptTree, 4, {}, "100%", 0.05},
        GreedyCase{"lever_noprune_target", "target", M::kLever, 4, {}, "100%"},
        GreedyCase{"lever_noprune_distilled_streamed0", "distilled", M::kLever, 4, {}, "0%"},
        GreedyCase{"lever_prune_q8", "Q8_0", M::kLever, 4, {}, "100%", 0.10, true},
        GreedyCase{"lever_prune_target_streamed0_emulated", "target", M::kLever, 4, {}, "0%", 0.10, true, 100e6},
        GreedyCase{"lever_prune_q4_streamed50_emulated", "Q4_0", M::kLever, 4, {}, "50%", 0.05, true, 50e6},
        GreedyCase{"lever_prune_distilled_streamed0_emulated", "distilled", M::kLever, 4, {}, "0%", 0.03, true, 100e6},
        GreedyCase{"lever_prune_other_model", "truncated", M::kLever, 4, {}, "100%", 0.02, true}),
    [](const auto& info) { return std::string(info.param.name); });

struct StochasticCase {
  const char* name;
  SpecConfig::Method method;
  int draft_len;
  std::vector<int> widths;
  bool prune = false;
  // Deterministic top-k children accept less often under sampling than i.i.d. drafts, and
  // LEVER grows large trees under emulated slow storage (most of their nodes are siblings).
  double min_accept_rate = 0.10;
};

class StochasticLossless : public ::testing::TestWithParam<StochasticCase> {};

TEST_P(StochasticLossless, FirstAndSecondTokenDistributionsMatchTarget) {
  const StochasticCase& c = GetParam();
  auto plain = make_session("", SpecConfig::Method::kNone, 0, {}, "100%");
  auto spec = make_session(quantized_draft("Q4_0"), c.method, c.draft_len, c.widths, c.prune ? "0%" : "100%", c.prune,
                           c.prune ? 100e6 : 0);
  ASSERT_TRUE(plain && spec);
  SamplingParams sp;
  // A flat-ish distribution, so the chi-square test has many populated categories.
  sp.temperature = 1.5f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  const auto prompt = *plain->tokenize("Once upon a time, there was a");
  const auto p1 = target_distribution(*plain, prompt, sp);

  const int trials = 2500;
  std::vector<double> first(p1.size(), 0.0);
  std::map<int32_t, std::vector<double>> second;  // first token -> counts of the second
  uint64_t accepted = 0, proposed = 0, pruned = 0;
  for (int i = 0; i < trials; ++i) {
    sp.seed = 1000 + i;
    std::vector<int32_t> out;
    auto r = spec->generate(prompt, 2, sp, true, [&](int32_t id, const std::string&) {
      if (id >= 0) out.push_back(id);
      return true;
    });
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(out.size(), 2u);
    accepted += r->spec.accepted_draft_tokens;
    proposed += r->spec.draft_tokens;
    pruned += r->spec.rows_pruned;
    first[out[0]] += 1;
    auto& row = second[out[0]];
    row.resize(p1.size());
    row[out[1]] += 1;
  }
  int populated = 0;
  for (double n : first) populated += n >= 5 ? 1 : 0;
  EXPECT_GE(populated, 10) << "the test distribution is too peaked to say much";
  const double p_first = test::chi_square_p_value(first, p1);
  EXPECT_GT(p_first, 1e-3) << "first-token distribution differs from the target's";
  // Second token, conditioned on the most frequent first token.
  int32_t top = 0;
  for (size_t t = 0; t < first.size(); ++t)
    if (first[t] > first[top]) top = static_cast<int32_t>(t);
  std::vector<int32_t> prefix = prompt;
  prefix.push_back(top);
  const auto p2 = target_distribution(*plain, prefix, sp);
  const double p_second = test::chi_square_p_value(second[top], p2);
  std::printf("%s: %d first tokens seen >= 5 times, first p=%.3f second p=%.3f (n=%.0f), accepted %llu of %llu\n",
              c.name, populated, p_first, p_second, first[top], static_cast<unsigned long long>(accepted),
              static_cast<unsigned long long>(proposed));
  EXPECT_GT(p_second, 1e-3) << "second-token distribution differs from the target's";
  EXPECT_GT(static_cast<double>(accepted), c.min_accept_rate * static_cast<double>(proposed))
      << "drafts must be accepted";
  EXPECT_LT(accepted, proposed) << "and sometimes rejected, or the residual path is untested";
  // LEVER prunes when the measured compute time makes rows cost more than the emulated
  // I/O they hide behind; a sanitizer's slowdown moves that balance.
  if (c.prune && !test::kSanitizerBuild) {
    EXPECT_GT(pruned, 0u) << "pruning must have dropped rows";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Drafts, StochasticLossless,
    ::testing::Values(StochasticCase{"chain", M::kChain, 3, {}}, StochasticCase{"tree", M::kTree, 2, {3, 2}},
                      StochasticCase{"opt_tree", M::kOptTree, 4, {}, false, 0.05},
                      StochasticCase{"lever_pruned_streamed0_emulated", M::kLever, 4, {}, true, 0.02}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SpeculativeErrors, BadLeverSettingsAreClearErrors) {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.spec.method = SpecConfig::Method::kLever;
  o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
  o.spec.prune.enabled = true;
  for (int bad : {0, 5, 99}) {  // stories260K has 5 layers: the exit must be after 1..4
    o.spec.prune.exit_layer = bad;
    auto s = Session::create(o);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("--lever-exit-layer"), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find("5 layers"), std::string::npos) << s.status().message();
  }
  o.spec.prune.exit_layer = 2;
  for (float bad : {-0.1f, 1.5f}) {
    o.spec.prune.theta = bad;
    auto s = Session::create(o);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("--lever-theta"), std::string::npos) << s.status().message();
  }
  o.spec.prune.theta = 0.1f;
  // A predictor written for another model (a quantised copy has other embeddings).
  const std::string other = quantized_draft("Q8_0");
  auto other_model = Model::load(other);
  ASSERT_TRUE(other_model.ok());
  const ModelHParams& hp = (*other_model)->hparams();
  const std::string predictor = test::scratch_dir("lever_predictor") + "/other.gguf";
  ASSERT_TRUE(LinearPredictorScorer::save(predictor, **other_model, 2, std::vector<float>(hp.n_embd, 1.0f),
                                          std::vector<float>(static_cast<size_t>(hp.n_vocab) * hp.n_embd, 0.0f))
                  .ok());
  o.spec.prune.predictor_path = predictor;
  auto s = Session::create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("another model"), std::string::npos) << s.status().message();
  o.spec.prune.predictor_path = test::shared_path(kTarget);  // a GGUF, but no predictor
  s = Session::create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a specflash predictor"), std::string::npos) << s.status().message();
  o.spec.prune.predictor_path = "/nonexistent/predictor.gguf";
  EXPECT_FALSE(Session::create(o).ok());
}

TEST(SpeculativeErrors, BadDraftsAndSizesAreClearErrors) {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.spec.method = SpecConfig::Method::kChain;
  o.spec.draft_model_path = test::shared_path("reference/models/synth-qwen2-gpt2.gguf");
  auto mismatch = Session::create(o);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("vocabulary"), std::string::npos) << mismatch.status().message();

  o.spec.draft_model_path = test::shared_path(kTarget);
  for (int bad : {0, 100000}) {
    o.spec.draft_len = bad;
    auto s = Session::create(o);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("--draft-len"), std::string::npos) << s.status().message();
  }
  o.spec.draft_len = 4;
  o.spec.method = SpecConfig::Method::kTree;
  o.spec.tree_widths = {0, 2};
  EXPECT_FALSE(Session::create(o).ok());
  o.spec.tree_widths = {32, 32, 32};
  auto huge = Session::create(o);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("nodes"), std::string::npos) << huge.status().message();

  o.spec.tree_widths = {};
  o.mem_budget = *MemoryBudget::parse("1M");
  auto too_big = Session::create(o);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("draft"), std::string::npos) << too_big.status().message();
}

}  // namespace
}  // namespace sf
