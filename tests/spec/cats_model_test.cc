// CATS and its Kangaroo baseline on the real stories260K model (5 layers).
//  - Layer ranges: a pass split into [0, a), [a, b), [b, N) over the same rows, or over the
//    rows in different groupings (one row at a time, then the rest), gives bit-identical
//    logits to one full pass, resident and streamed (what "nothing is recomputed" rests on).
//  - Greedy: output equals plain decoding token for token at 0%, 50% and 100% budgets, and
//    drafts, corrections and accepted corrections all happen.
//  - Sampling: first- and second-token distributions match the target's (chi-square).
//  - Memory: no draft model; the footprint is the target's own at the same budget.
//  - Bad boundaries are clear errors.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "chi_square.h"
#include "engine/session.h"
#include "spec/cats_boundaries.h"
#include "spec/tree_batch.h"
#include "spec_test_util.h"
#include "test_paths.h"

namespace sf {
namespace {

using test::target_distribution;

const char* kTarget = "models/stories260K.gguf";

std::unique_ptr<Session> make_session(SpecConfig::Method method, const char* budget, int gamma = 5, int ldm = -1,
                                      int lsv = -1, int branches = 0) {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.n_threads = 2;
  o.n_ctx = 256;
  o.mem_budget = *MemoryBudget::parse(budget);
  o.spec.method = method;
  o.spec.draft_len = gamma;
  o.spec.cats.ldm = ldm;
  o.spec.cats.lsv = lsv;
  o.spec.cats.extra_branches = branches;
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

// ---- layer ranges -------------------------------------------------------------------

TokenTree small_tree() {
  TokenTree t;
  const int32_t a = t.add(40, TokenTree::kRoot, 0.5f);
  const int32_t b = t.add(41, a, 0.5f);
  t.add(42, b, 0.5f);
  t.add(43, a, 0.5f);  // a sibling leaf, like a correction
  t.add(44, TokenTree::kRoot, 0.5f);
  return t;
}

std::vector<float> all_logits(ModelRunner& r, int64_t rows) {
  std::vector<float> out(static_cast<size_t>(rows) * r.hparams().n_vocab);
  EXPECT_TRUE(r.begin_head().ok());
  for (int64_t i = 0; i < rows; ++i) r.row_logits(i, out.data() + i * r.hparams().n_vocab);
  r.end_head();
  return out;
}

ForwardBatch rows_of(const ForwardBatch& b, int64_t begin, int64_t end) {
  ForwardBatch out;
  out.n_kv = b.n_kv;
  for (int64_t r = begin; r < end; ++r) {
    out.tokens.push_back(b.tokens[r]);
    out.positions.push_back(b.positions[r]);
    out.kv_cells.push_back(b.kv_cells[r]);
    out.mask.insert(out.mask.end(), b.mask.begin() + r * b.n_kv, b.mask.begin() + (r + 1) * b.n_kv);
  }
  return out;
}

class LayerRangeTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LayerRangeTest, SplitPassesAreBitIdenticalToOneFullPass) {
  auto s = make_session(SpecConfig::Method::kNone, GetParam());
  ASSERT_TRUE(s);
  auto prompt = s->tokenize("Once upon a time, there was a little");
  ASSERT_TRUE(prompt.ok());
  ASSERT_TRUE(s->evaluate(*prompt, false, nullptr).ok());
  ModelRunner& r = s->target();
  const int N = r.hparams().n_layer, E = r.hparams().n_embd;
  const ForwardBatch batch = make_tree_batch(small_tree(), 30, r.n_past());
  const int64_t n = batch.size();
  ASSERT_TRUE(r.forward(batch).ok());
  const std::vector<float> full = all_logits(r, n);

  // The same rows in three ranges.
  ASSERT_TRUE(r.forward_layers(batch, 0, 1, nullptr).ok());
  std::vector<float> h(r.hidden(), r.hidden() + n * E);
  ASSERT_TRUE(r.forward_layers(batch, 1, 3, h.data()).ok());
  ASSERT_TRUE(r.forward_layers(batch, 3, N, r.hidden()).ok());  // input aliasing the runner's own buffer
  const std::vector<float> split = all_logits(r, n);
  EXPECT_EQ(std::memcmp(full.data(), split.data(), full.size() * sizeof(float)), 0);

  // CATS's grouping: rows 0..2 one at a time through [0, 2), then together through [2, 4),
  // the other rows through [0, 4), then every row through [4, N).
  std::vector<float> h4(static_cast<size_t>(n) * E);
  std::vector<float> h2(3 * static_cast<size_t>(E));
  for (int64_t row = 0; row < 3; ++row) {
    ASSERT_TRUE(r.forward_layers(rows_of(batch, row, row + 1), 0, 2, nullptr).ok());
    std::copy_n(r.hidden(), E, h2.data() + row * E);
  }
  ASSERT_TRUE(r.forward_layers(rows_of(batch, 0, 3), 2, 4, h2.data()).ok());
  std::copy_n(r.hidden(), 3 * E, h4.data());
  ASSERT_TRUE(r.forward_layers(rows_of(batch, 3, n), 0, 4, nullptr).ok());
  std::copy_n(r.hidden(), (n - 3) * E, h4.data() + 3 * E);
  ASSERT_TRUE(r.forward_layers(batch, 4, N, h4.data()).ok());
  const std::vector<float> grouped = all_logits(r, n);
  EXPECT_EQ(std::memcmp(full.data(), grouped.data(), full.size() * sizeof(float)), 0);

  // Only passes that end at the last layer count as forward passes; all count weight bytes.
  const RunnerCounters before = r.counters();
  ASSERT_TRUE(r.forward_layers(batch, 0, 2, nullptr).ok());
  EXPECT_EQ(r.counters().forward_passes, before.forward_passes);
  EXPECT_GT(r.counters().weight_bytes, before.weight_bytes);
}

INSTANTIATE_TEST_SUITE_P(Budgets, LayerRangeTest, ::testing::Values("100%", "0%"),
                         [](const auto& info) { return std::string(info.param[0] == '1' ? "resident" : "streamed"); });

// ---- greedy losslessness ----------------------------------------------------------------

const std::vector<std::string> kPrompts = {
    "Once upon a time",
    "Lily wanted to play with her big red ball. One day",
    "The little dog was sad because",
    "Tom and Sue went to the park.",
    "One day, a bird",
    "She looked at the sky and",
};

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

struct GreedyCase {
  const char* name;
  SpecConfig::Method method;
  const char* budget;
  int gamma, ldm, lsv, branches;
  double min_accept_rate;  // of proposed nodes (the plain exit head of a 5-layer model is weak)
};

class CatsGreedy : public ::testing::TestWithParam<GreedyCase> {};

TEST_P(CatsGreedy, EqualsPlainDecodingAndAcceptsDrafts) {
  const GreedyCase& c = GetParam();
  auto plain = make_session(SpecConfig::Method::kNone, "100%");
  auto spec = make_session(c.method, c.budget, c.gamma, c.ldm, c.lsv, c.branches);
  ASSERT_TRUE(plain && spec);
  ASSERT_TRUE(spec->cats());
  EXPECT_EQ(spec->drafter(), nullptr) << "self-speculation has no draft model";
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t proposed = 0, accepted = 0, corrections = 0, accepted_leaves = 0, cycles = 0;
  for (const auto& prompt : kPrompts) {
    GenerationStats st;
    const auto want = generate(*plain, prompt, 48, greedy, nullptr);
    const auto got = generate(*spec, prompt, 48, greedy, &st);
    ASSERT_EQ(want, got) << "prompt: " << prompt;
    proposed += st.spec.draft_tokens;
    accepted += st.spec.accepted_draft_tokens;
    corrections += st.spec.corrections;
    accepted_leaves += st.spec.accepted_corrections;
    cycles += st.spec.cycles;
    EXPECT_GT(st.decode_weight_bytes, 0u);
    if (std::string(c.budget) != "100%") {
      EXPECT_GT(st.decode_stream_bytes, 0u);
    }
  }
  std::printf("%s: %s; cycles %llu proposed %llu accepted %llu corrections %llu accepted leaves %llu\n", c.name,
              spec->cats()->options().cuts.describe().c_str(), static_cast<unsigned long long>(cycles),
              static_cast<unsigned long long>(proposed), static_cast<unsigned long long>(accepted),
              static_cast<unsigned long long>(corrections), static_cast<unsigned long long>(accepted_leaves));
  EXPECT_GT(proposed, 0u);
  EXPECT_GT(static_cast<double>(accepted), c.min_accept_rate * static_cast<double>(proposed))
      << "drafts must be accepted";
  if (c.method == SpecConfig::Method::kCats) {
    EXPECT_GT(corrections, 0u) << "the shallow verifier must have disagreed somewhere";
    EXPECT_GT(accepted_leaves, 0u) << "and some corrections must have been accepted";
  } else {
    EXPECT_EQ(corrections, 0u) << "kangaroo has no shallow verifier";
  }
}

using M = SpecConfig::Method;
INSTANTIATE_TEST_SUITE_P(
    Budgets, CatsGreedy,
    ::testing::Values(GreedyCase{"cats_default_resident", M::kCats, "100%", 5, -1, -1, 0, 0.03},
                      GreedyCase{"cats_default_streamed0", M::kCats, "0%", 5, -1, -1, 0, 0.004},
                      GreedyCase{"cats_ldm3_lsv4_streamed0", M::kCats, "0%", 3, 3, 4, 0, 0.05},
                      GreedyCase{"cats_ldm2_lsv4_streamed50", M::kCats, "50%", 7, 2, 4, 0, 0.03},
                      GreedyCase{"cats_branches_resident", M::kCats, "100%", 5, 2, 4, 2, 0.02},
                      GreedyCase{"kangaroo_ldm3_resident", M::kKangaroo, "100%", 4, 3, -1, 0, 0.03},
                      GreedyCase{"kangaroo_ldm3_streamed0", M::kKangaroo, "0%", 4, 3, -1, 0, 0.03}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- sampling ---------------------------------------------------------------------------

class CatsSampled : public ::testing::TestWithParam<const char*> {};

TEST_P(CatsSampled, FirstAndSecondTokenDistributionsMatchTarget) {
  auto plain = make_session(SpecConfig::Method::kNone, "100%");
  auto spec = make_session(M::kCats, GetParam(), 3, 3, 4, 1);
  ASSERT_TRUE(plain && spec);
  SamplingParams sp;
  sp.temperature = 1.5f;  // flat-ish, so many categories are populated
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  const auto prompt = *plain->tokenize("Once upon a time, there was a");
  const auto p1 = target_distribution(*plain, prompt, sp);
  const int trials = 2500;
  std::vector<double> first(p1.size(), 0.0);
  std::map<int32_t, std::vector<double>> second;
  uint64_t accepted = 0, proposed = 0, leaves = 0;
  for (int i = 0; i < trials; ++i) {
    sp.seed = 7000 + i;
    std::vector<int32_t> out;
    auto r = spec->generate(prompt, 2, sp, true, [&](int32_t id, const std::string&) {
      if (id >= 0) out.push_back(id);
      return true;
    });
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(out.size(), 2u);
    accepted += r->spec.accepted_draft_tokens;
    proposed += r->spec.draft_tokens;
    leaves += r->spec.accepted_corrections;
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
  const auto p2 = target_distribution(*plain, prefix, sp);
  const double p_second = test::chi_square_p_value(second[top], p2);
  std::printf("cats sampled at %s: first p=%.3f second p=%.3f; accepted %llu of %llu (%llu side leaves)\n", GetParam(),
              p_first, p_second, static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(proposed),
              static_cast<unsigned long long>(leaves));
  EXPECT_GT(p_first, 1e-3) << "first-token distribution differs from the target's";
  EXPECT_GT(p_second, 1e-3) << "second-token distribution differs from the target's";
  EXPECT_GT(accepted, 0u) << "drafts must be accepted";
  EXPECT_GT(leaves, 0u) << "side leaves (corrections, branches) must be accepted too";
  EXPECT_LT(accepted, proposed);
}

INSTANTIATE_TEST_SUITE_P(Budgets, CatsSampled, ::testing::Values("100%", "0%"),
                         [](const auto& info) { return std::string(info.param[0] == '1' ? "resident" : "streamed"); });

// ---- memory and errors --------------------------------------------------------------------

TEST(CatsMemory, FootprintIsTheTargetsOwnAtTheSameBudget) {
  // A byte budget: the LM head (pinned for CATS) counts inside it, as everything does.
  for (const char* budget : {"2M", "3M"}) {
    auto plain = make_session(M::kNone, budget);
    auto cats = make_session(M::kCats, budget);
    ASSERT_TRUE(plain && cats);
    EXPECT_LE(cats->plan().footprint_bytes(), cats->plan().budget_bytes) << budget;
    EXPECT_EQ(cats->plan().kv_bytes, plain->plan().kv_bytes) << "one KV cache: the target's";
    EXPECT_LE(cats->plan().scratch_bytes, plain->plan().scratch_bytes) << "no draft model's memory";
    EXPECT_TRUE(cats->plan().head_resident);
    EXPECT_LE(cats->plan().footprint_bytes(), plain->plan().budget_bytes) << "the same byte budget holds both";
  }
}

TEST(CatsErrors, BadBoundariesAreClearErrors) {
  struct Bad {
    int ldm, lsv;
    const char* flag;
  };
  for (const Bad& b : {Bad{0, -1, "--cats-ldm"}, Bad{4, -1, "--cats-ldm"}, Bad{-1, 5, "--cats-lsv"},
                       Bad{-1, 1, "--cats-lsv"}, Bad{3, 3, "--cats-ldm"}}) {
    SessionOptions o;
    o.model_path = test::shared_path(kTarget);
    o.spec.method = M::kCats;
    o.spec.cats.ldm = b.ldm;
    o.spec.cats.lsv = b.lsv;
    auto s = Session::create(o);
    ASSERT_FALSE(s.ok()) << b.ldm << "/" << b.lsv;
    EXPECT_NE(s.status().message().find(b.flag), std::string::npos) << s.status().message();
  }
  // Defaults follow the pinned layers; a 2-layer target cannot hold three stages.
  auto d = choose_cats_boundaries(32, 15, -1, -1, false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ldm, 3);
  EXPECT_EQ(d->lsv, 15);
  d = choose_cats_boundaries(22, 0, -1, -1, false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ldm, 2);
  EXPECT_EQ(d->lsv, 3);
  EXPECT_TRUE(d->shallow_streamed());
  d = choose_cats_boundaries(22, 30, -1, -1, false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->lsv, 21);
  EXPECT_FALSE(choose_cats_boundaries(2, 2, -1, -1, false).ok());
  EXPECT_TRUE(choose_cats_boundaries(2, 2, -1, -1, true).ok());
}

}  // namespace
}  // namespace sf
