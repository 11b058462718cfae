// EdgeLLM's tree builder over a scripted drafter (the same distribution below every node):
// the pacer's first steps match a hand computation of its rule, the fallback stops the
// tree where the tree-cumulative confidence drops below alpha, alpha adapts by the paper's
// equation (3) within its bounds, the BiLD baseline stops at an unsure token, a carried
// tree is continued without drafting its nodes again. Also the pieces of provisional
// generation: the compute gate, the background worker and re-rooting a subtree.
#include "spec/edgellm_tree_builder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "base/background_worker.h"
#include "spec/compute_gate.h"

namespace sf {
namespace {

class ScriptedDrafter : public Drafter {
 public:
  explicit ScriptedDrafter(std::vector<float> probs) : probs_(std::move(probs)) {}
  const char* name() const override { return "scripted"; }
  uint64_t resident_bytes() const override { return 0; }
  void reset(const std::vector<int32_t>&) override {}
  Status begin_cycle(const std::vector<int32_t>&, const SamplingParams&, const Sampler&) override {
    drafted_ = carried_;  // what a real drafter keeps after commit_carry()
    drafted_now_.clear();
    return Status::Ok();
  }
  Status draft(const TokenTree& tree, const std::vector<int32_t>& nodes, std::vector<NodeDistribution>* out) override {
    out->clear();
    ++counters_.passes;
    counters_.seconds += pass_seconds_;
    for (int32_t n : nodes) {
      EXPECT_TRUE(n == TokenTree::kRoot || tree.node(n).parent == TokenTree::kRoot ||
                  drafted_.count(tree.node(n).parent) > 0)
          << "node drafted before its parent";
      EXPECT_EQ(drafted_.count(n), 0u) << "node " << n << " drafted twice";
      drafted_.insert(n);
      drafted_now_.insert(n);
      NodeDistribution d;
      for (size_t k = 0; k < probs_.size(); ++k) d.probs.push_back({static_cast<int32_t>(k), probs_[k]});
      out->push_back(d);
    }
    return Status::Ok();
  }
  void commit(const TokenTree&, const std::vector<int32_t>&, int32_t) override {}
  const DraftCounters& draft_counters() const override { return counters_; }
  std::set<int32_t> carried_;      // nodes drafted in an earlier cycle
  std::set<int32_t> drafted_now_;  // nodes drafted in this cycle
  double pass_seconds_ = 0;        // what each draft pass reports it took

 private:
  std::set<int32_t> drafted_;
  std::vector<float> probs_;
  DraftCounters counters_;
};

// The paper's pacer (the paced shape on raw draft probabilities, so the shapes can be
// computed by hand; the default shape is the most likely node's) and
// lending decided by the switch alone (these scripted cycles have no read-ahead to hide
// drafting behind); the tests of the calibrated pacer and of the lending gate set their own.
EdgeLlmConfig config(float alpha, bool pacer = true) {
  EdgeLlmConfig c;
  c.alpha = alpha;
  c.alpha_max = 0.5f;
  c.pacer = pacer;
  c.shape = EdgeLlmConfig::Shape::kPaced;
  c.calibrated_pacer = false;
  c.lend_only_exposed = false;
  return c;
}

TokenTree build(EdgeLlmTreeBuilder& builder, ScriptedDrafter& drafter, int64_t max_nodes,
                const CarriedDrafts* carried = nullptr, double hidden_draft_seconds = 0) {
  BuildContext ctx;
  ctx.max_nodes = max_nodes;
  ctx.hidden_draft_seconds = hidden_draft_seconds;
  ctx.sampling.temperature = 0;
  ctx.carried = carried;
  Sampler s(ctx.sampling);
  EXPECT_TRUE(drafter.begin_cycle({1}, ctx.sampling, s).ok());
  TokenTree tree;
  EXPECT_TRUE(builder.build(drafter, ctx, &tree).ok());
  return tree;
}

// What the target chose: accept `accepted` nodes along the path of `leaf`.
CycleStats verified(const TokenTree& tree, int32_t leaf, int accepted) {
  CycleStats st;
  st.tree_nodes = tree.size();
  st.accepted = accepted;
  const std::vector<int32_t> path = tree.path_to(leaf);
  st.visited.push_back({TokenTree::kRoot, 0});
  for (int i = 0; i < accepted; ++i) st.visited.push_back({path[i], 0});
  return st;
}

TEST(EdgeLlmTreeBuilder, PacerFollowsTheDeficitRule) {
  // Below every node: token 0 (0.6), 1 (0.3), 2 (0.1). By hand, with M = tree size + 1:
  //  1 node:  the root's best token (tree empty)                          -> A = [0]
  //  2 nodes: A: 2*0.6-1 = 0.2; new branch [1] at the root: 2*0.3-0 = 0.6  -> B = [1]
  //  3 nodes: A: 3*0.6-1 = 0.8; B: -0.1; [2] at the root: 0.3             -> A's child [0,0]
  //  4 nodes: [0,0]: 4*0.36-2 = -0.56; B: 0.2; [2]: 0.4; [0,1]: 4*0.18-1   -> C = [2]
  ScriptedDrafter drafter({0.6f, 0.3f, 0.1f});
  EdgeLlmTreeBuilder builder(config(1e-4f), 64, 12, "edgellm");
  const TokenTree tree = build(builder, drafter, 4);
  ASSERT_EQ(tree.size(), 4);
  ASSERT_EQ(tree.children(TokenTree::kRoot).size(), 3u);
  EXPECT_EQ(tree.node(tree.children(TokenTree::kRoot)[0]).token, 0);
  EXPECT_EQ(tree.node(tree.children(TokenTree::kRoot)[1]).token, 1);
  EXPECT_EQ(tree.node(tree.children(TokenTree::kRoot)[2]).token, 2);
  const int32_t a = tree.children(TokenTree::kRoot)[0];
  ASSERT_EQ(tree.children(a).size(), 1u);
  EXPECT_EQ(tree.node(tree.children(a)[0]).token, 0);
  EXPECT_NEAR(tree.node(tree.children(a)[0]).draft_prob, 0.6f, 1e-6);
}

TEST(EdgeLlmTreeBuilder, BranchLengthsFollowConfidence) {
  // A large tree: the likeliest branch is the longest, and every branch's length is close
  // to its share M * C_i (the pacer keeps max_i (M * C_i - TB_i) small).
  ScriptedDrafter drafter({0.7f, 0.2f, 0.1f});
  EdgeLlmTreeBuilder builder(config(1e-6f), 40, 40, "edgellm");
  const TokenTree tree = build(builder, drafter, 40);
  ASSERT_EQ(tree.size(), 40);
  int32_t deepest = 0;
  double worst_deficit = 0;
  for (int32_t n = 0; n < tree.size(); ++n) {
    if (!tree.children(n).empty()) continue;
    double c = 1;
    for (int32_t a = n; a != TokenTree::kRoot; a = tree.node(a).parent) c *= tree.node(a).draft_prob;
    worst_deficit = std::max(worst_deficit, 40 * c - tree.node(n).depth);
    if (tree.node(n).depth > tree.node(deepest).depth) deepest = n;
  }
  for (int32_t a = deepest; a != TokenTree::kRoot; a = tree.node(a).parent) EXPECT_EQ(tree.node(a).token, 0);
  EXPECT_LT(worst_deficit, 2.0) << "no branch is far shorter than its confidence asks";
}

// The node reached from the root by following `token` at every depth (kRoot: none).
int32_t chain_end(const TokenTree& tree, int32_t token) {
  int32_t node = TokenTree::kRoot;
  for (int32_t next = tree.find_child(node, token); next >= 0; next = tree.find_child(node, token)) node = next;
  return node;
}

// `tree` holds `nodes` nodes in one chain of token 0 below the root.
void expect_one_chain_of_token_zero(const TokenTree& tree, int nodes) {
  EXPECT_EQ(tree.size(), nodes);
  EXPECT_EQ(tree.children(TokenTree::kRoot).size(), 1u);
  EXPECT_EQ(tree.node(chain_end(tree, 0)).depth, nodes) << "one chain of token 0";
}

// The calibrated pacer paces by what the target accepts. The draft is unsure (token 0 at
// 0.5, 1 at 0.3, 2 at 0.2) but the target always picks token 0: once the calibration has
// learnt that, the calibrated pacer spends six nodes on one deep chain of token 0, while
// the paper's pacer, on the raw probabilities, opens branches at the root (its second step:
// 2 * 0.3 - 0 = 0.6 beats 2 * 0.5 - 1 = 0).
TEST(EdgeLlmTreeBuilder, CalibratedPacerPacesByWhatTheTargetAccepts) {
  ScriptedDrafter drafter({0.5f, 0.3f, 0.2f});
  EdgeLlmConfig calibrated_config = config(1e-9f);
  calibrated_config.calibrated_pacer = true;
  calibrated_config.measured_size = false;
  EdgeLlmConfig raw_config = calibrated_config;
  raw_config.calibrated_pacer = false;
  EdgeLlmTreeBuilder calibrated(calibrated_config, 64, 12, "edgellm");
  EdgeLlmTreeBuilder raw(raw_config, 64, 12, "edgellm-rawconf");
  for (EdgeLlmTreeBuilder* builder : {&calibrated, &raw}) {
    for (int i = 0; i < 60; ++i) {
      const TokenTree tree = build(*builder, drafter, 6);
      const int32_t end = chain_end(tree, 0);
      ASSERT_NE(end, TokenTree::kRoot);
      builder->observe(tree, verified(tree, end, tree.node(end).depth));  // the target picks 0 everywhere
    }
  }
  expect_one_chain_of_token_zero(build(calibrated, drafter, 6), 6);
  const TokenTree wide = build(raw, drafter, 6);
  ASSERT_EQ(wide.size(), 6);
  EXPECT_GE(wide.children(TokenTree::kRoot).size(), 2u) << "the paper's pacer opens branches at the root";
  EXPECT_LT(wide.node(chain_end(wide, 0)).depth, 6);
}

// The most likely shape adds, each step, the node whose whole path the target most likely
// accepts. A fresh calibration reads a draft probability p as about 0.9 * p (its prior), so
// with token 0 at 0.8 below every node the chain [0], [0,0], [0,0,0], [0,0,0,0] is worth
// ~0.72, 0.52, 0.37, 0.27 against ~0.14 for token 1 at the root: four nodes are one chain.
// The paced shape on the same calibrated chances opens [1] at its third step
// (3 * 0.52 - 2 < 0 against 3 * 0.14 - 0).
TEST(EdgeLlmTreeBuilder, MostLikelyShapeAddsTheNodeMostLikelyAccepted) {
  ScriptedDrafter drafter({0.8f, 0.15f, 0.05f});
  EdgeLlmConfig paced_config = config(1e-4f);
  paced_config.calibrated_pacer = true;
  EdgeLlmConfig likely_config = paced_config;
  likely_config.shape = EdgeLlmConfig::Shape::kMostLikely;
  EdgeLlmTreeBuilder likely(likely_config, 64, 12, "edgellm");
  EdgeLlmTreeBuilder paced(paced_config, 64, 12, "edgellm-paced");
  expect_one_chain_of_token_zero(build(likely, drafter, 4), 4);
  const TokenTree wide = build(paced, drafter, 4);
  ASSERT_EQ(wide.size(), 4);
  EXPECT_GE(wide.children(TokenTree::kRoot).size(), 2u) << "the pacer opens a branch at the root";
  // Where the root's second token is the likelier node, the most likely shape takes it:
  // below a 0.5/0.45 split, [1] (~0.41) comes before [0,0] (~0.2).
  ScriptedDrafter split({0.5f, 0.45f, 0.05f});
  EdgeLlmTreeBuilder likely_split(likely_config, 64, 12, "edgellm");
  const TokenTree two = build(likely_split, split, 2);
  ASSERT_EQ(two.size(), 2);
  EXPECT_EQ(two.children(TokenTree::kRoot).size(), 2u);
}

TEST(EdgeLlmTreeBuilder, FallbackVerifiesWhenTreeConfidenceDropsBelowAlpha) {
  // One chain of 0.5-probable tokens: T_c = 0.5^k; with alpha 0.1 the fourth token is
  // added (T_c = 0.125 before it) and the fifth is not (T_c = 0.0625).
  ScriptedDrafter drafter({0.5f, 0.5f});
  EdgeLlmTreeBuilder builder(config(0.1f, /*pacer=*/false), 64, 12, "edgellm-nopacer");
  const TokenTree tree = build(builder, drafter, 64);
  EXPECT_EQ(tree.size(), 4);
  EXPECT_EQ(tree.max_depth(), 4);
  EXPECT_NEAR(builder.threshold(), 0.1, 1e-7);
}

TEST(EdgeLlmTreeBuilder, AlphaAdaptsByEquationThree) {
  ScriptedDrafter drafter({0.5f, 0.5f});
  EdgeLlmTreeBuilder builder(config(0.1f, /*pacer=*/false), 64, 12, "edgellm-nopacer");
  TokenTree tree = build(builder, drafter, 64);
  ASSERT_EQ(tree.size(), 4);
  // All four accepted: alpha halves.
  builder.observe(tree, verified(tree, 3, 4));
  EXPECT_NEAR(builder.alpha(), 0.05, 1e-7);
  // A new tree at alpha 0.05: five tokens (T_c 0.0625 >= 0.05 before the fifth, 0.03125
  // after). Three accepted of five: alpha / T_c^(2/5) with T_c = 0.03125, i.e. 0.05 / 0.25.
  tree = build(builder, drafter, 64);
  ASSERT_EQ(tree.size(), 5);
  builder.observe(tree, verified(tree, 4, 3));
  EXPECT_NEAR(builder.alpha(), 0.2, 1e-6);
  // Bounded above: repeated failures cannot push it past alpha_max.
  for (int i = 0; i < 10; ++i) {
    tree = build(builder, drafter, 64);
    builder.observe(tree, verified(tree, tree.size() - 1, 0));
  }
  EXPECT_NEAR(builder.alpha(), 0.5, 1e-7);
}

TEST(EdgeLlmTreeBuilder, FixedSizeWithoutFallbackAndBildThreshold) {
  ScriptedDrafter drafter({0.5f, 0.3f, 0.2f});
  EdgeLlmConfig c = config(0.1f);
  c.fallback = false;
  c.fixed_tokens = 7;
  EdgeLlmTreeBuilder fixed(c, 64, 12, "edgellm-nofallback");
  EXPECT_EQ(build(fixed, drafter, 64).size(), 7);
  EXPECT_LT(fixed.threshold(), 0) << "no alpha without the fallback";

  EdgeLlmConfig bld = config(0.1f, false);
  bld.token_threshold = 0.6f;  // 0.5 < 0.6: not even the first token is confident enough
  EdgeLlmTreeBuilder unsure(bld, 64, 12, "bld");
  EXPECT_EQ(build(unsure, drafter, 64).size(), 0);
  bld.token_threshold = 0.4f;  // every token passes: a chain to the depth limit
  EdgeLlmTreeBuilder sure(bld, 64, 12, "bld");
  const TokenTree chain = build(sure, drafter, 64);
  EXPECT_EQ(chain.size(), 12);
  EXPECT_EQ(chain.max_depth(), 12);
}

// The cost stop, by hand. A chain of 0.95-probable tokens (the pacer off, alpha out of the
// way), draft passes of 0.2 ms: the profile then charges a step that must draft its leaf
// 0.2 ms for the (one-row) pass, plus its verification row. Before any
// verification the calibration is its prior: a 0.95 token is accepted with r x h = 0.9 x
// 0.95 = 0.855, so before the step to k+1 nodes the chain is worth
// G_k = 1 + sum_{i<=k} 0.855^i tokens and costs 0.2 k ms of drafting + verify(k + 1); the
// step adds 0.855^k q tokens, q (the running acceptance of a leaf's next token) between
// 0.73 and 0.855 after the warm-up chain.
std::size_t cost_stopped_chain(bool cost_stop, double pass_ms, double row_ms, double hidden_draft_ms = 0) {
  ScriptedDrafter drafter({0.95f, 0.05f});
  drafter.pass_seconds_ = 0.2e-3;
  EdgeLlmConfig c = config(1e-6f, /*pacer=*/false);
  c.cost_stop = cost_stop;
  EdgeLlmTreeBuilder builder(c, 64, 20, "edgellm-nopacer");
  // No verification measured yet: nothing to weigh, the chain runs to the depth limit (and
  // the draft's cost gets measured).
  EXPECT_EQ(build(builder, drafter, 64).size(), 20);
  for (int rows = 1; rows <= 65; ++rows)
    builder.latency_profile()->observe_verify(rows, 0, (pass_ms + (rows - 1) * row_ms) * 1e-3);
  return static_cast<std::size_t>(build(builder, drafter, 64, nullptr, hidden_draft_ms * 1e-3).size());
}

TEST(EdgeLlmTreeBuilder, CostStopVerifiesWhenTheNextStepWouldLowerTheRate) {
  // A pass of 1 ms + 0.04 ms per row (five draft steps). The step to k+1 nodes pays while
  // 0.855^k q / 0.24 ms > G_k / (0.2 k + 1 + 0.04 k): k = 2: 2.22..2.6 > 2.59 / 1.48 = 1.75
  // pays; k = 4: 1.63..1.90 < 3.75 / 1.96 = 1.91 does not.
  const std::size_t cheap = cost_stopped_chain(true, 1.0, 0.04);
  EXPECT_GE(cheap, 3u);
  EXPECT_LE(cheap, 4u);
  // Without the cost stop the same profile leaves the chain at its depth limit (the size
  // bound allows 25 rows of 0.04 ms: they double a 1 ms pass).
  EXPECT_EQ(cost_stopped_chain(false, 1.0, 0.04), 20u);
  // A pass of 100 ms and 0.01 ms per row (500 draft steps): even the step to 20 nodes pays,
  // 0.855^19 q / 0.22 ms >= 0.17 tokens/ms > G_19 / T = 6.6 / 104 = 0.064 (a row is
  // charged at least a tenth of a draft pass, 0.02 ms).
  EXPECT_EQ(cost_stopped_chain(true, 100.0, 0.01), 20u);
}

// Drafting that the target's read-ahead hides costs nothing. With the 1 ms pass above and
// 2 ms of read-ahead, a chain of k nodes has run k draft passes of 0.2 ms (the root's the
// first), so the step to k+1 nodes is charged only its row (0.04 ms) while 0.2 k + 0.2 <= 2:
// up to 10 nodes, each paying (k = 9: 0.244 q / 0.04 >= 4.5 > 5.45 / 3.16 = 1.72); the step
// to 11 is charged 0.24 ms and does not pay (0.209 q / 0.24 <= 0.75 < 5.66 / 3.4 = 1.66).
TEST(EdgeLlmTreeBuilder, CostStopChargesOnlyDraftingPastTheReadAhead) {
  EXPECT_LE(cost_stopped_chain(true, 1.0, 0.04, /*hidden_draft_ms=*/0), 4u);
  EXPECT_EQ(cost_stopped_chain(true, 1.0, 0.04, /*hidden_draft_ms=*/2.0), 10u);
  // Read-ahead longer than the whole chain's drafting: only the rows are charged, so the
  // chain grows until a row's chance no longer pays for its 0.04 ms: the step to k+1 nodes
  // pays while 0.855^k q / 0.04 ms > G_k / (0.2 k + 1 + 0.04 k); k = 16: 1.49..1.74 > 6.42 /
  // 4.84 = 1.33 pays; k = 19: 0.94..1.10 < 6.6 / 5.56 = 1.19 does not.
  const std::size_t all_hidden = cost_stopped_chain(true, 1.0, 0.04, /*hidden_draft_ms=*/100.0);
  EXPECT_GE(all_hidden, 17u);
  EXPECT_LE(all_hidden, 19u);
}

// Once cycles are measured, a step must beat the session's realised rate, not the tree's
// own. With a 100 ms pass the chain alone runs to the depth limit (above); after a cycle
// that committed 10 tokens in 10 ms (1 token/ms), the step to k+1 nodes pays only while
// 0.855^k q / 0.22 ms > 1: k = 7 pays (0.334 q / 0.22 >= 1.1 for q >= 0.73), k = 9 does
// not (0.244 q / 0.22 <= 0.95).
TEST(EdgeLlmTreeBuilder, CostStopMeasuresStepsAgainstTheRealisedRate) {
  ScriptedDrafter drafter({0.95f, 0.05f});
  drafter.pass_seconds_ = 0.2e-3;
  EdgeLlmTreeBuilder builder(config(1e-6f, /*pacer=*/false), 64, 20, "edgellm-nopacer");
  ASSERT_EQ(build(builder, drafter, 64).size(), 20);
  for (int rows = 1; rows <= 65; ++rows)
    builder.latency_profile()->observe_verify(rows, 0, (100.0 + (rows - 1) * 0.01) * 1e-3);
  TokenTree tree = build(builder, drafter, 64);
  ASSERT_EQ(tree.size(), 20);
  CycleStats fast;
  fast.tree_nodes = tree.size();
  fast.accepted = 9;
  fast.draft_seconds = 1e-3;
  fast.verify_seconds = 9e-3;
  builder.observe(tree, fast);
  const int32_t size = build(builder, drafter, 64).size();
  EXPECT_GE(size, 8);
  EXPECT_LE(size, 9);
}

// The measured size bound: where big trees realise fewer tokens per second (acceptance
// saturates at 7 tokens while every node costs 0.2 ms on a 1 ms pass), the builder settles
// on the cap whose cycles are fastest (8 nodes: 8 tokens in 2.6 ms, against 8 in 4.2 ms at
// 16 and 8 in 13.8 ms uncapped), trying each cap once and the uncapped tree first.
TEST(EdgeLlmTreeBuilder, MeasuredSizeBoundSettlesOnTheFastestCap) {
  ScriptedDrafter drafter({0.95f, 0.05f});
  EdgeLlmConfig c = config(1e-9f, /*pacer=*/false);
  c.cost_stop = false;  // only the cap bounds the chain
  EdgeLlmTreeBuilder builder(c, 64, 64, "edgellm-nopacer");
  std::map<int, int> cycles_at;
  int first_size = -1;
  for (int i = 0; i < 400; ++i) {
    const TokenTree tree = build(builder, drafter, 64);
    if (first_size < 0) first_size = tree.size();
    ++cycles_at[tree.size()];
    CycleStats st = verified(tree, tree.size() - 1, std::min(tree.size(), 7));
    st.draft_seconds = 0.2e-3 * tree.size();
    st.verify_seconds = 1e-3;
    builder.observe(tree, st);
  }
  EXPECT_EQ(first_size, 64) << "the uncapped tree first";
  for (int size : {8, 16}) EXPECT_GE(cycles_at[size], 1) << "the cap of " << size << " is tried";
  EXPECT_GT(cycles_at[8], 300) << "most cycles under the fastest cap";
  EXPECT_EQ(builder.size_selector().best(), 2) << "caps: none, 16, 8";
  // Switched off (the edgellm-nosize ablation), no cap is ever chosen.
  c.measured_size = false;
  EdgeLlmTreeBuilder plain(c, 64, 64, "edgellm-nopacer");
  for (int i = 0; i < 20; ++i) {
    const TokenTree tree = build(plain, drafter, 64);
    EXPECT_EQ(plain.size_cap(), 0);
    CycleStats st = verified(tree, tree.size() - 1, std::min(tree.size(), 7));
    st.draft_seconds = 0.2e-3 * tree.size();
    st.verify_seconds = 1e-3;
    plain.observe(tree, st);
  }
  EXPECT_EQ(plain.size_selector().cycles(0), 0);
}

TEST(EdgeLlmTreeBuilder, ContinuesACarriedTreeWithoutDraftingItAgain) {
  ScriptedDrafter drafter({0.9f, 0.1f});
  EdgeLlmTreeBuilder builder(config(0.3f, /*pacer=*/false), 64, 12, "edgellm");
  CarriedDrafts carried;
  const int32_t a = carried.tree.add(0, TokenTree::kRoot, 0.9f);
  carried.tree.add(0, a, 0.9f);
  NodeDistribution d;
  d.probs = {{0, 0.9f}, {1, 0.1f}};
  carried.drafted = {TokenTree::kRoot, a};  // the root and the first node were drafted ahead
  carried.dists = {d, d};
  drafter.carried_ = {TokenTree::kRoot, a};
  const TokenTree tree = build(builder, drafter, 64, &carried);
  // 0.9^k >= 0.3 up to k = 11; the carried two nodes are the start of the chain.
  EXPECT_EQ(tree.size(), 12);
  EXPECT_EQ(drafter.drafted_now_.count(TokenTree::kRoot), 0u) << "the carried root was drafted again";
  EXPECT_EQ(drafter.drafted_now_.count(a), 0u);
  EXPECT_EQ(drafter.drafted_now_.count(1), 1u) << "the carried leaf is drafted to extend it";
  int32_t leaf = TokenTree::kRoot;
  const NodeDistribution* dist = nullptr;
  ASSERT_TRUE(builder.provisional_anchor(&leaf, &dist));
  EXPECT_EQ(tree.node(leaf).depth, 12) << "provisional drafting continues the likeliest branch";
}

// Lending the target's waits saves only the next cycle's drafting, and only what of it runs
// past the target's pending read-ahead. Where every cycle's drafting (1 ms) is hidden behind
// 5 ms of read-ahead the builder never offers an anchor; where it is not hidden (no
// read-ahead, 1 ms of a 3 ms cycle) it does, and the switch lends first.
TEST(EdgeLlmTreeBuilder, LendsOnlyWhereDraftingRunsPastTheReadAhead) {
  EdgeLlmConfig c = config(1e-9f, /*pacer=*/false);
  c.lend_only_exposed = true;
  c.cost_stop = false;
  c.measured_size = false;
  const auto offers_after_cycles = [&](double hidden_ms) {
    ScriptedDrafter drafter({0.9f, 0.1f});
    drafter.pass_seconds_ = 0.25e-3;
    EdgeLlmTreeBuilder builder(c, 64, 12, "edgellm");
    builder.begin_generation();
    int offered = 0;
    for (int i = 0; i < 10; ++i) {
      const TokenTree tree = build(builder, drafter, 4, nullptr, hidden_ms * 1e-3);
      int32_t leaf = TokenTree::kRoot;
      const NodeDistribution* dist = nullptr;
      if (builder.provisional_anchor(&leaf, &dist)) ++offered;
      CycleStats st = verified(tree, tree.size() - 1, 1);
      st.draft_seconds = 1e-3;  // four draft passes of 0.25 ms
      st.verify_seconds = 2e-3;
      builder.observe(tree, st);
    }
    return offered;
  };
  EXPECT_EQ(offers_after_cycles(/*hidden_ms=*/5.0), 0) << "the drafting was hidden behind the read-ahead";
  // The first cycle of a prompt drafts the prompt and is not counted; from the third on
  // the drafting is known to be exposed.
  EXPECT_GE(offers_after_cycles(/*hidden_ms=*/0), 8);
}

#if defined(__linux__)
// The provisional worker lends only idle cores: its jobs run under SCHED_IDLE, so the
// target's threads and its I/O thread preempt it at once when a wait ends; while its owner
// waits for it, it runs at normal priority (a busy machine must not starve what the
// owner waits for).
int policy_of_a_job(BackgroundWorker& worker) {
  std::atomic<int> policy{-1};
  worker.run([&] { policy = sched_getscheduler(0); });
  while (policy.load() == -1) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // not in wait()
  worker.wait();
  return policy.load();
}

TEST(BackgroundWorker, IdlePriorityRunsJobsUnderSchedIdleExceptWhileWaitedFor) {
  BackgroundWorker idle(BackgroundWorker::Priority::kIdle), normal;
  EXPECT_EQ(policy_of_a_job(idle), SCHED_IDLE);
  EXPECT_EQ(policy_of_a_job(normal), SCHED_OTHER);
  // A job that is still running when its owner waits: boosted.
  std::atomic<bool> go{false};
  std::atomic<int> policy{-1};
  idle.run([&] {
    while (!go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the owner is in wait() by now
    policy = sched_getscheduler(0);
  });
  go = true;
  idle.wait();
  EXPECT_EQ(policy.load(), SCHED_OTHER);
  // And back to idle for the next job.
  EXPECT_EQ(policy_of_a_job(idle), SCHED_IDLE);
}
#endif

TEST(ComputeGate, LendsTheCoresOnlyDuringStalls) {
  ComputeGate gate;
  EXPECT_TRUE(gate.wait_open()) << "open before any pass";
  gate.begin_pass();
  std::atomic<int> steps{0};
  BackgroundWorker worker;
  worker.run([&] {
    if (gate.wait_open()) steps.fetch_add(1);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(steps.load(), 0) << "the worker ran while the target was computing";
  gate.on_stall_begin();
  worker.wait();
  EXPECT_EQ(steps.load(), 1);
  gate.on_stall_end();
  gate.end_pass();
  EXPECT_GT(gate.lent_seconds(), 0.0);
  EXPECT_GT(gate.blocked_seconds(), 0.01);
  // end_pass() releases a worker that is still waiting, and tells it to stop.
  gate.begin_pass();
  std::atomic<int> stopped{0};
  worker.run([&] {
    if (!gate.wait_open()) stopped.fetch_add(1);
  });
  gate.end_pass();
  worker.wait();
  EXPECT_EQ(stopped.load(), 1);
  EXPECT_EQ(steps.load(), 1);
}

TEST(TokenTree, SubtreeBelowReRootsANode) {
  TokenTree t;
  const int32_t a = t.add(5, TokenTree::kRoot, 0.5f);
  const int32_t b = t.add(6, TokenTree::kRoot, 0.4f);
  const int32_t a1 = t.add(7, a, 0.3f);
  const int32_t a2 = t.add(8, a, 0.2f);
  t.add(9, b, 0.1f);
  const int32_t a11 = t.add(10, a1, 0.9f);
  std::vector<int32_t> old_of_new;
  const TokenTree s = t.subtree_below(a, &old_of_new);
  ASSERT_EQ(s.size(), 3);
  EXPECT_EQ(old_of_new, (std::vector<int32_t>{a1, a2, a11}));
  EXPECT_EQ(s.node(0).parent, TokenTree::kRoot);
  EXPECT_EQ(s.node(0).depth, 1);
  EXPECT_EQ(s.node(2).parent, 0);
  EXPECT_EQ(s.node(2).depth, 2);
  EXPECT_EQ(s.node(2).token, 10);
  EXPECT_FLOAT_EQ(s.node(2).draft_prob, 0.9f);
}

}  // namespace
}  // namespace sf
