// Retrieval drafting without a model: what each mode proposes for hand-made sequences,
// calibration paths from given predictions, draft-reuse selection and lifetime, and the
// hybrid merge.
#include "spec/retrieval_drafter.h"

#include <gtest/gtest.h>

#include "spec/context_calibration.h"
#include "spec/draft_reuse.h"
#include "spec/hybrid_drafter.h"

namespace sf {
namespace {

using Tokens = std::vector<int32_t>;

NodeDistribution draft_one(Drafter& d, const TokenTree& tree, int32_t node) {
  std::vector<NodeDistribution> out;
  EXPECT_TRUE(d.draft(tree, {node}, &out).ok());
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? NodeDistribution{} : out[0];
}

SamplingParams greedy() {
  SamplingParams s;
  s.temperature = 0;
  return s;
}

RetrievalOptions plain(RetrievalOptions::Mode mode) {
  RetrievalOptions o;
  o.mode = mode;
  o.calibrate = false;
  o.reuse = false;
  return o;
}

TEST(RetrievalDrafter, CoordGenWeightsBranchesByOccurrenceCounts) {
  // After "1 2" the context continued with 3 twice and with 4 once.
  const Tokens seq = {1, 2, 3, 9, 1, 2, 3, 8, 1, 2, 4, 7, 1, 2};
  RetrievalDrafter d(plain(RetrievalOptions::Mode::kCoordGen), nullptr);
  d.reset(seq);
  Sampler sampler(greedy());
  ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
  TokenTree tree;
  const NodeDistribution root = draft_one(d, tree, TokenTree::kRoot);
  ASSERT_EQ(root.probs.size(), 2u);
  EXPECT_EQ(root.probs[0].id, 3);
  EXPECT_EQ(root.probs[1].id, 4);
  EXPECT_NEAR(root.probs[0].p / root.probs[1].p, 2.0, 1e-5) << "probabilities follow the counts";
  // Below 3, the path "1 2 3" continued with 9 and 8 once each.
  const int32_t three = tree.add(3, TokenTree::kRoot, root.probs[0].p);
  const NodeDistribution below = draft_one(d, tree, three);
  ASSERT_EQ(below.probs.size(), 2u);
  EXPECT_EQ(below.probs[0].id, 8);  // equal counts: ascending id
  EXPECT_EQ(below.probs[1].id, 9);
  EXPECT_GT(below.probs[0].p, root.probs[0].p / 2) << "a longer match is worth more";
}

TEST(RetrievalDrafter, CommitExtendsTheLiveSource) {
  RetrievalDrafter d(plain(RetrievalOptions::Mode::kCoordGen), nullptr);
  Tokens seq = {5, 6, 7};
  d.reset(seq);
  Sampler sampler(greedy());
  ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
  TokenTree tree;
  EXPECT_TRUE(draft_one(d, tree, TokenTree::kRoot).probs.empty()) << "nothing recurs yet";
  d.commit(tree, {}, 5);
  seq.push_back(5);
  ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
  const NodeDistribution root = draft_one(d, tree, TokenTree::kRoot);
  ASSERT_FALSE(root.probs.empty());
  EXPECT_EQ(root.probs[0].id, 6);
  EXPECT_EQ(d.live().text(), seq);
}

TEST(RetrievalDrafter, SamAndPldProposeOneChain) {
  const Tokens seq = {1, 2, 3, 4, 5, 6, 0, 3, 4};
  for (auto mode : {RetrievalOptions::Mode::kSam, RetrievalOptions::Mode::kPld}) {
    RetrievalOptions o = plain(mode);
    o.max_chain = 3;
    RetrievalDrafter d(o, nullptr);
    d.reset(seq);
    Sampler sampler(greedy());
    ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
    TokenTree tree;
    int32_t node = TokenTree::kRoot;
    Tokens chain;
    for (int i = 0; i < 5; ++i) {
      const NodeDistribution dist = draft_one(d, tree, node);
      if (dist.probs.empty()) break;
      ASSERT_EQ(dist.probs.size(), 1u);
      EXPECT_EQ(dist.probs[0].p, 1.0f);
      node = tree.add(dist.probs[0].id, node, 1.0f);
      chain.push_back(dist.probs[0].id);
    }
    EXPECT_EQ(chain, (Tokens{5, 6, 0})) << d.name();
    // A token off the chain gets nothing below it.
    const int32_t off = tree.add(9, TokenTree::kRoot, 0.5f);
    EXPECT_TRUE(draft_one(d, tree, off).probs.empty());
  }
}

TEST(ContextCalibration, FollowsTheTargetsPredictionsThroughTheContext) {
  // Context: 10 11 12 13 14 15. After 11 the target predicts 20 (the context says 12); 20
  // occurs nowhere in the context, so that path stops. After 12 it predicts 14, found at
  // position 4, where it predicts 30. After 14 it predicts 30 (the context says 15).
  const Tokens prompt = {10, 11, 12, 13, 14, 15};
  std::vector<std::vector<TokenProb>> rows = {
      {{11, 0.9f}},               // after 10: agrees with the context (skipped)
      {{20, 0.6f}, {12, 0.3f}},   // after 11
      {{14, 0.5f}, {13, 0.05f}},  // after 12 (13 is below min_prob)
      {{14, 0.9f}},               // after 13: agrees
      {{30, 0.7f}},               // after 14
  };
  CalibrationOptions o;
  o.top_k = 2;
  o.depth = 3;
  o.anchor = 2;
  const auto paths = calibrated_paths(prompt, 0, rows, o);
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0], (Tokens{10, 11, 20}));
  EXPECT_EQ(paths[1], (Tokens{11, 12, 14, 30}));
  EXPECT_EQ(paths[2], (Tokens{13, 14, 30}));
}

TEST(RetrievalDrafter, CalibrationSourceProposesTheModelsWording) {
  RetrievalOptions o = plain(RetrievalOptions::Mode::kCoordGen);
  o.calibrate = true;
  RetrievalDrafter d(o, nullptr);
  const Tokens prompt = {10, 11, 12, 13, 14, 15, 10, 11};
  d.reset(prompt);
  // The target predicted 20 after "10 11" where the context had 12.
  std::vector<std::vector<TokenProb>> rows(prompt.size() - 1);
  rows[1] = {{20, 0.8f}};
  d.observe_prefill(prompt, 0, rows);
  EXPECT_EQ(d.calibrated_path_count(), 1u);
  Sampler sampler(greedy());
  ASSERT_TRUE(d.begin_cycle(prompt, greedy(), sampler).ok());
  TokenTree tree;
  const NodeDistribution root = draft_one(d, tree, TokenTree::kRoot);
  ASSERT_EQ(root.probs.size(), 2u);
  EXPECT_TRUE((root.probs[0].id == 12 && root.probs[1].id == 20) || (root.probs[0].id == 20 && root.probs[1].id == 12));
}

TEST(DraftReuse, KeepsTheLongestRunTheTargetAgreedWith) {
  // Rejected chain below the root: 5 6 7 8 9. The target predicts after each: x 7 8 1 2,
  // so 6 -> 7 -> 8 agree (run 6 7 8) and the prediction after 8 (1) extends it.
  TokenTree tree;
  int32_t at = TokenTree::kRoot;
  for (int32_t t : {5, 6, 7, 8, 9}) at = tree.add(t, at, 0.5f);
  tree.add(42, TokenTree::kRoot, 0.1f);  // a sibling: not on the first-child chain
  const std::vector<int32_t> predictions = {99, 7, 8, 1, 2};
  DraftReuse reuse;
  int asked = 0;
  const auto segment = reuse.select(tree, {}, [&](int32_t node) {
    ++asked;
    return predictions[node];
  });
  EXPECT_EQ(segment, (Tokens{6, 7, 8, 1}));
  EXPECT_EQ(asked, 5);
  // Nothing agreed: no segment.
  EXPECT_TRUE(reuse.select(tree, {}, [](int32_t) { return 77; }).empty());
}

TEST(DraftReuse, SegmentsLiveAtLeastOneCycleThenExpire) {
  ReuseOptions o;
  o.lifetime_tokens = 10;
  DraftReuse reuse(o);
  EXPECT_TRUE(reuse.keep({1, 2, 3}));
  EXPECT_FALSE(reuse.keep({1, 2, 3})) << "duplicates are kept once";
  // Kept at a commit, it serves the next cycle; that cycle's commit ages it.
  EXPECT_FALSE(reuse.age(5));
  EXPECT_EQ(reuse.segments().size(), 1u);
  EXPECT_TRUE(reuse.age(6)) << "11 drafted tokens since it was kept: past the threshold of 10";
  EXPECT_TRUE(reuse.segments().empty());
}

// A cycle whose chain 7 8 9 is rejected at the root (the target's bonus is 4), though after 7
// the target predicts 8 and after 8, 9 (then 5): the reuse keeps the segment 7 8 9 5.
void reject_chain_7_8_9(RetrievalDrafter& d, Tokens* seq) {
  TokenTree tree;
  int32_t at = TokenTree::kRoot;
  for (int32_t t : {7, 8, 9}) at = tree.add(t, at, 0.5f);
  d.observe_rejected(tree, {}, [](int32_t node) { return node == 0 ? 8 : node == 1 ? 9 : 5; });
  d.commit(tree, {}, 4);
  seq->push_back(4);
}

TEST(RetrievalDrafter, ReusedSegmentIsOfferedAtTheRoot) {
  RetrievalOptions o = plain(RetrievalOptions::Mode::kCoordGen);
  o.reuse = true;
  RetrievalDrafter d(o, nullptr);
  Tokens seq = {1, 2, 3};
  d.reset(seq);
  Sampler sampler(greedy());
  ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
  EXPECT_TRUE(d.wants_rejected_predictions());
  reject_chain_7_8_9(d, &seq);
  ASSERT_EQ(d.reuse().segments().size(), 1u);
  EXPECT_EQ(d.reuse().segments()[0].tokens, (Tokens{7, 8, 9, 5}));
  ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
  TokenTree next;
  const NodeDistribution root = draft_one(d, next, TokenTree::kRoot);
  ASSERT_FALSE(root.probs.empty());
  EXPECT_EQ(root.probs[0].id, 7);
  const int32_t seven = next.add(7, TokenTree::kRoot, root.probs[0].p);
  const NodeDistribution below = draft_one(d, next, seven);
  ASSERT_FALSE(below.probs.empty());
  EXPECT_EQ(below.probs[0].id, 8) << "the segment continues below its start";
}

// A target prediction on a rejected row is worth what reuse later gets accepted: tokens that
// only the reuse source offered, per row asked for (with a prior before anything is
// measured). Tree builders that weigh rows by their cost count it (frontier_tree_builder.h).
TEST(RetrievalDrafter, ReuseIsValuedByTheTokensOnlyItGotAccepted) {
  EXPECT_EQ(RetrievalDrafter(plain(RetrievalOptions::Mode::kCoordGen), nullptr).reuse_tokens_per_rejected_row(), 0)
      << "no reuse source, no value";
  RetrievalOptions o = plain(RetrievalOptions::Mode::kCoordGen);
  o.reuse = true;
  RetrievalDrafter d(o, nullptr);
  Tokens seq = {1, 2, 3};
  d.reset(seq);
  const double prior = d.reuse_tokens_per_rejected_row();
  EXPECT_GT(prior, 0);
  Sampler sampler(greedy());
  // Cycle 1: the chain 7 8 9 is rejected at the root; its three rows are asked for and keep
  // the segment 7 8 9 5, and nothing reuse offered was accepted: the value falls.
  ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
  reject_chain_7_8_9(d, &seq);
  const double after_rows = d.reuse_tokens_per_rejected_row();
  EXPECT_LT(after_rows, prior);
  // Cycle 2: the segment's 7 and 8 (which no other source offers after 1 2 3 4) are accepted.
  ASSERT_TRUE(d.begin_cycle(seq, greedy(), sampler).ok());
  TokenTree next;
  ASSERT_EQ(draft_one(d, next, TokenTree::kRoot).probs.at(0).id, 7);
  const int32_t seven = next.add(7, TokenTree::kRoot, 0.3f);
  ASSERT_EQ(draft_one(d, next, seven).probs.at(0).id, 8);
  const int32_t eight = next.add(8, seven, 0.3f);
  d.commit(next, {seven, eight}, 9);
  seq.insert(seq.end(), {7, 8, 9});
  const double after_accepted = d.reuse_tokens_per_rejected_row();
  EXPECT_GT(after_accepted, prior);
  // Cycle 3: 1 2 3 is in the live text too, so a 1 that both sources offer after ... 9 is not
  // counted for reuse.
  d.reset({1, 2, 3, 1});
  ASSERT_TRUE(d.begin_cycle({1, 2, 3, 1}, greedy(), sampler).ok());
  TokenTree third;
  ASSERT_EQ(draft_one(d, third, TokenTree::kRoot).probs.at(0).id, 2);
  const int32_t two = third.add(2, TokenTree::kRoot, 0.5f);
  d.commit(third, {two}, 3);
  EXPECT_LT(d.reuse_tokens_per_rejected_row(), after_accepted) << "a live match is not reuse's";
}

TEST(HybridDrafter, MergeKeepsTheLargerProbability) {
  NodeDistribution a, b;
  a.probs = {{1, 0.6f}, {2, 0.3f}};
  b.probs = {{2, 0.8f}, {3, 0.1f}};
  const NodeDistribution m = merge_max(a, b);
  ASSERT_EQ(m.probs.size(), 3u);
  EXPECT_EQ(m.probs[0].id, 2);
  EXPECT_FLOAT_EQ(m.probs[0].p, 0.8f);
  EXPECT_EQ(m.probs[1].id, 1);
  EXPECT_EQ(m.probs[2].id, 3);
}

}  // namespace
}  // namespace sf
