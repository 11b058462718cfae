// Tree builders over a scripted drafter: static trees give the configured shape and never
// exceed the cycle's node limit; frontier trees draft children in batches, only below
// drafted parents, respect their budgets, and LEVER's gain/cost tree grows while rows are
// cheap and shrinks when they are expensive, and grows further when rejected rows are worth
// reusing. The tree batch gives every node its
// ancestors and nothing else.
#include <gtest/gtest.h>

#include <set>

#include "spec/frontier_tree_builder.h"
#include "spec/static_tree_builder.h"
#include "spec/tree_batch.h"

namespace sf {
namespace {

// Below every node the same distribution: token k with probability probs[k].
class ScriptedDrafter : public Drafter {
 public:
  explicit ScriptedDrafter(std::vector<float> probs) : probs_(std::move(probs)) {}
  const char* name() const override { return "scripted"; }
  uint64_t resident_bytes() const override { return 0; }
  void reset(const std::vector<int32_t>&) override {}
  Status begin_cycle(const std::vector<int32_t>&, const SamplingParams&, const Sampler&) override {
    drafted_.clear();
    return Status::Ok();
  }
  Status draft(const TokenTree& tree, const std::vector<int32_t>& nodes, std::vector<NodeDistribution>* out) override {
    out->clear();
    ++counters_.passes;
    counters_.rows += nodes.size();
    counters_.seconds += 1e-4 * static_cast<double>(nodes.size());
    if (!nodes.empty() && nodes.front() == TokenTree::kRoot) {
      // The root's pass runs the committed tokens the draft has not run yet (a real drafter's
      // catch-up): those beyond the one a cycle leaves behind cost catch_up_seconds each.
      const double extra = catch_up_seconds * static_cast<double>(catch_up_next - 1);
      counters_.seconds += extra;
      counters_.catch_up_tokens += catch_up_next;
      counters_.catch_up_seconds += 1e-4 + extra;
      catch_up_next = 1;
    }
    batch_sizes.push_back(static_cast<int>(nodes.size()));
    for (int32_t n : nodes) {
      EXPECT_TRUE(n == TokenTree::kRoot || drafted_.count(tree.node(n).parent) > 0 ||
                  tree.node(n).parent == TokenTree::kRoot)
          << "node drafted before its parent";
      EXPECT_EQ(drafted_.count(n), 0u) << "node drafted twice";
      drafted_.insert(n);
      NodeDistribution d;
      for (size_t k = 0; k < probs_.size(); ++k) d.probs.push_back({static_cast<int32_t>(k), probs_[k]});
      out->push_back(d);
    }
    return Status::Ok();
  }
  void commit(const TokenTree&, const std::vector<int32_t>&, int32_t) override {}
  const DraftCounters& draft_counters() const override { return counters_; }
  double reuse_tokens_per_rejected_row() const override { return reuse_value; }
  std::vector<int> batch_sizes;
  double reuse_value = 0;       // what a rejected row is worth later
  uint64_t catch_up_next = 1;   // tokens the next root pass runs
  double catch_up_seconds = 0;  // each of them beyond the first

 private:
  std::vector<float> probs_;
  std::set<int32_t> drafted_;
  DraftCounters counters_;
};

TokenTree build(TreeBuilder& builder, Drafter& drafter, int64_t max_nodes, BuildContext ctx = {}) {
  TokenTree tree;
  ctx.max_nodes = max_nodes;
  ctx.sampling.temperature = 0;
  Sampler s(ctx.sampling);
  EXPECT_TRUE(drafter.begin_cycle({1}, ctx.sampling, s).ok());
  EXPECT_TRUE(builder.build(drafter, ctx, &tree).ok());
  return tree;
}

TEST(StaticTreeBuilder, ChainAndTreeShapes) {
  ScriptedDrafter d({0.5f, 0.3f, 0.2f});
  SpecConfig chain;
  chain.method = SpecConfig::Method::kChain;
  chain.draft_len = 5;
  auto p = make_tree_builder(chain);
  TokenTree t = build(*p, d, 1000);
  EXPECT_EQ(t.size(), 5);
  EXPECT_EQ(t.max_depth(), 5);
  EXPECT_EQ(t.node(0).token, 0) << "greedy takes the top token";

  SpecConfig tree;
  tree.method = SpecConfig::Method::kTree;
  tree.tree_widths = {3, 2, 1};
  auto q = make_tree_builder(tree);
  t = build(*q, d, 1000);
  EXPECT_EQ(t.size(), 3 + 6 + 6);
  EXPECT_EQ(t.children(TokenTree::kRoot).size(), 3u);
  EXPECT_EQ(t.candidates(TokenTree::kRoot).size(), 3u) << "the candidate set is recorded";
  EXPECT_EQ(tree_node_count(tree.tree_widths), 15);
  // One draft pass per level (root, depth 1, depth 2); leaves are not drafted.
  EXPECT_EQ(d.batch_sizes.back(), 6);
}

TEST(StaticTreeBuilder, RespectsNodeLimit) {
  ScriptedDrafter d({0.4f, 0.3f, 0.2f, 0.1f});
  SpecConfig tree;
  tree.method = SpecConfig::Method::kTree;
  tree.tree_widths = {4, 4};
  auto p = make_tree_builder(tree);
  EXPECT_EQ(build(*p, d, 7).size(), 7);
  EXPECT_EQ(build(*p, d, 0).size(), 0);
}

TEST(FrontierTreeBuilder, OptTreeSpendsItsBudgetOnTheLikeliestNodes) {
  // A peaked draft: the best tree of 6 nodes is mostly the top chain.
  ScriptedDrafter d({0.9f, 0.05f, 0.05f});
  SpecConfig c;
  c.method = SpecConfig::Method::kOptTree;
  c.node_budget = 6;
  auto b = make_tree_builder(c);
  const TokenTree t = build(*b, d, 1000);
  EXPECT_EQ(t.size(), 6);
  EXPECT_EQ(t.max_depth(), 6) << "0.9^6 = 0.53 beats any second child (<= 0.05)";
  EXPECT_EQ(build(*b, d, 3).size(), 3) << "the context limit caps the budget";
  // A flat draft: breadth first.
  ScriptedDrafter flat({0.34f, 0.33f, 0.33f});
  const TokenTree w = build(*b, flat, 1000);
  EXPECT_EQ(w.size(), 6);
  EXPECT_EQ(w.children(TokenTree::kRoot).size(), 3u);
  // Batch-aware expansion: equally likely nodes were drafted together.
  int max_batch = 0;
  for (int n : flat.batch_sizes) max_batch = std::max(max_batch, n);
  EXPECT_GE(max_batch, 2);
}

TEST(FrontierTreeBuilder, LeverGrowsWhenRowsAreCheapAndStopsWhenTheyAreNot) {
  ScriptedDrafter d({0.7f, 0.2f, 0.1f});
  SpecConfig c;
  c.method = SpecConfig::Method::kLever;
  c.max_tree_nodes = 64;
  auto cheap = make_tree_builder(c);
  auto dear = make_tree_builder(c);
  auto linear = make_tree_builder(c);
  // A pass whose cost is mostly fixed (streamed weights), one where rows cost more, and one
  // purely proportional to its rows (where no draft token can pay for its row).
  for (int r : {1, 2, 4, 8, 16, 32, 65}) {
    cheap->latency_profile()->observe_verify(r, 0, 0.1 + 1e-4 * r);
    dear->latency_profile()->observe_verify(r, 0, 0.01 + 0.002 * r);
    linear->latency_profile()->observe_verify(r, 0, 0.01 * r);
  }
  const TokenTree big = build(*cheap, d, 1000);
  const TokenTree small = build(*dear, d, 1000);
  EXPECT_EQ(build(*linear, d, 1000).size(), 0) << "a row costing a whole pass never pays";
  std::printf("lever trees: %d nodes (fixed cost) vs %d (cost per row)\n", big.size(), small.size());
  EXPECT_GT(big.size(), 8);
  EXPECT_LT(small.size(), big.size());
  EXPECT_GE(small.size(), 1);
  EXPECT_LE(big.size(), 64);
  // Children are deterministic (prunable), below drafted parents only.
  for (int32_t i = -1; i < big.size(); ++i) EXPECT_TRUE(big.deterministic_children(i));
}

// Where the drafter reuses rejected drafts (CoordGen's reuse), a row is also worth what the
// target's prediction there brings back later: where rows are cheap next to a pass, the tree
// takes nodes whose acceptance alone would not pay for them. The expected rate stays what
// the tree itself is expected to emit.
TEST(FrontierTreeBuilder, RowsWorthReusingGrowTheTree) {
  SpecConfig c;
  c.method = SpecConfig::Method::kLever;
  c.max_tree_nodes = 64;
  auto builder = make_tree_builder(c);
  // A streamed pass: 100 ms, each row 1 ms more.
  for (int r : {1, 2, 4, 8, 16, 32, 65}) builder->latency_profile()->observe_verify(r, 0, 0.1 + 1e-3 * r);
  ScriptedDrafter d({0.3f, 0.05f, 0.02f});
  const int alone = build(*builder, d, 1000).size();
  d.reuse_value = 0.05;
  const int with_reuse = build(*builder, d, 1000).size();
  std::printf("gain/cost trees: %d nodes, %d when a rejected row is worth 0.05 tokens later\n", alone, with_reuse);
  EXPECT_GE(alone, 1);
  EXPECT_GT(with_reuse, alone + 2);
  EXPECT_LE(with_reuse, 64);
}

// LEVER's gain/cost trees charge every expansion a draft pass: a root pass that first caught
// the draft model up on a new prompt (or, inside auto, on tokens another source's cycles
// emitted) must not be learnt as one. Learnt, it inflated the pass cost 2-20x for the cycles
// that followed and cut their trees short (docs/auto.md).
TEST(FrontierTreeBuilder, ALongCatchUpIsNotLearntAsTheCostOfADraftPass) {
  SpecConfig c;
  c.method = SpecConfig::Method::kLever;
  c.max_tree_nodes = 64;
  // A streamed pass (1 ms, rows nearly free) and draft passes of 0.1 ms a node: the draft's
  // cost is what bounds the tree.
  const auto lever_builder = [&c] {
    auto b = make_tree_builder(c);
    for (int r : {1, 2, 4, 8, 16, 32, 65}) b->latency_profile()->observe_verify(r, 0, 1e-3 + 1e-5 * r);
    return b;
  };
  // Each builder's first cycle starts a prompt; the fourth tree is compared (the first
  // cycles also split the passes into a fixed part and a part per row).
  ScriptedDrafter plain_start({0.7f, 0.2f, 0.1f});
  auto without = lever_builder();
  for (int i = 0; i < 3; ++i) build(*without, plain_start, 1000);
  const int normal = build(*without, plain_start, 1000).size();
  // The first root pass catches up on a 40-token prompt at 1 ms a token: 39 ms, 390x a pass.
  ScriptedDrafter caught_up({0.7f, 0.2f, 0.1f});
  caught_up.catch_up_next = 40;
  caught_up.catch_up_seconds = 1e-3;
  auto with = lever_builder();
  for (int i = 0; i < 3; ++i) build(*with, caught_up, 1000);
  EXPECT_NEAR(with->latency_profile()->draft_pass_seconds(), without->latency_profile()->draft_pass_seconds(), 1e-9);
  const int after = build(*with, caught_up, 1000).size();
  EXPECT_GE(after, normal - 1);
  // What learning it would have done: a profile told the catch-up's 39 ms as its first pass.
  ScriptedDrafter d({0.7f, 0.2f, 0.1f});
  auto learnt = lever_builder();
  learnt->latency_profile()->observe_draft(1, 39e-3);
  const int cut = build(*learnt, d, 1000).size();
  std::printf("lever trees after a prompt: %d nodes, %d after a 40-token catch-up, %d had it been learnt\n", normal,
              after, cut);
  EXPECT_LT(cut, normal / 2);
  // A cycle's own leftover (the bonus token and an undrafted accepted leaf) is learnt.
  const double pass = with->latency_profile()->draft_pass_seconds();
  caught_up.catch_up_next = 2;
  build(*with, caught_up, 1000);
  EXPECT_GT(with->latency_profile()->draft_pass_seconds(), pass);
}

TEST(TreeBatch, AncestorOnlyMaskAndDepthPositions) {
  TokenTree tree;
  const int32_t a = tree.add(10, TokenTree::kRoot, 0.5f);
  const int32_t b = tree.add(11, TokenTree::kRoot, 0.5f);
  const int32_t c = tree.add(12, a, 0.5f);
  const ForwardBatch batch = make_tree_batch(tree, 7, 4);
  ASSERT_EQ(batch.size(), 4);
  EXPECT_EQ(batch.tokens, (std::vector<int32_t>{7, 10, 11, 12}));
  EXPECT_EQ(batch.positions, (std::vector<int32_t>{4, 5, 5, 6}));
  EXPECT_EQ(batch.kv_cells, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(batch.n_kv, 8);
  for (int64_t row = 0; row < 4; ++row)
    for (int32_t cell = 0; cell <= 4; ++cell) EXPECT_TRUE(batch.can_attend(row, cell));  // prefix + root
  EXPECT_TRUE(batch.can_attend(tree_row(c), 5));                                         // c sees its parent a
  EXPECT_FALSE(batch.can_attend(tree_row(c), 6));                                        // but not its uncle b
  EXPECT_TRUE(batch.can_attend(tree_row(c), 7));                                         // and itself
  EXPECT_FALSE(batch.can_attend(tree_row(b), 5));  // siblings do not see each other
  EXPECT_FALSE(batch.can_attend(tree_row(a), 7));  // nor descendants
}

TEST(TokenTree, SubtreeKeepsRecordsAndMapsNodes) {
  TokenTree t;
  const int32_t a = t.add(10, TokenTree::kRoot, 0.5f);
  const int32_t b = t.add(11, TokenTree::kRoot, 0.4f);
  const int32_t c = t.add(12, b, 0.3f);
  t.candidates(b) = {{12, 0.3f}, {13, 0.2f}};
  std::vector<int32_t> old_of_new;
  const TokenTree s = t.subtree({false, true, true}, &old_of_new);
  ASSERT_EQ(s.size(), 2);
  EXPECT_EQ(old_of_new, (std::vector<int32_t>{b, c}));
  EXPECT_EQ(s.node(0).token, 11);
  EXPECT_EQ(s.node(1).parent, 0);
  EXPECT_EQ(s.candidates(0).size(), 2u);
  (void)a;
}

}  // namespace
}  // namespace sf
