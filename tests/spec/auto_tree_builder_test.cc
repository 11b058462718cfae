// AutoTreeBuilder: what a cycle teaches about the draft and the target does not depend on
// which arm built its tree, so every arm that learns it learns it from every cycle. An arm
// that runs rarely (LEVER's, when its first cycles were unlucky) would otherwise shape its
// trees with a calibration learnt from a handful of its own cycles.
#include "spec/auto_tree_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spec/edgellm_tree_builder.h"
#include "spec/fixed_drafter.h"
#include "spec/frontier_tree_builder.h"
#include "spec/latency_profile.h"
#include "spec/mirror_chain_builder.h"
#include "spec/static_tree_builder.h"

namespace sf {
namespace {

TEST(AutoTreeBuilder, EveryArmsCalibrationLearnsFromTheCyclesOfTheOthers) {
  std::vector<AutoArm> arms;
  arms.push_back({"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1")});
  arms.push_back({"lever", std::make_unique<FrontierTreeBuilder>(FrontierBuilderOptions{}, "lever")});
  arms.push_back({"edgellm", std::make_unique<EdgeLlmTreeBuilder>(EdgeLlmConfig{}, 64, 12, "edgellm")});
  FrontierBuilderOptions raw;
  raw.renormalise_candidates = false;
  arms.push_back({"coordgen", std::make_unique<FrontierTreeBuilder>(raw, "coordgen"), false, ArmSource::kRetrieval});
  AutoTreeBuilder autob(std::move(arms));
  ASSERT_EQ(autob.current_arm(), 0) << "before any build, the first arm is the current one";
  AcceptanceCalibration* lever = autob.arms()[1].builder->acceptance_calibration();
  AcceptanceCalibration* edgellm = autob.arms()[2].builder->acceptance_calibration();
  ASSERT_NE(lever, nullptr);
  ASSERT_NE(edgellm, nullptr);
  AcceptanceCalibration* retrieval = autob.arms()[3].builder->acceptance_calibration();
  ASSERT_NE(retrieval, nullptr);
  const double prior = lever->reliability();

  // The chain's cycles: a one-node tree drafted from candidates {5, 7}; the target picked
  // token 9, outside them, every time.
  TokenTree tree;
  tree.add(5, TokenTree::kRoot, 0.6f);
  tree.candidates(TokenTree::kRoot) = {{5, 0.6f}, {7, 0.3f}};
  CycleStats stats;
  stats.tree_nodes = 1;
  stats.rows_verified = 2;
  stats.verify_seconds = 1e-3;
  stats.visited = {{TokenTree::kRoot, 9}};
  for (int i = 0; i < 20; ++i) autob.observe(tree, stats);

  EXPECT_EQ(autob.selector().cycles(0), 20) << "the cycles were the chain's";
  EXPECT_EQ(autob.selector().cycles(1), 0);
  EXPECT_LT(lever->reliability(), prior - 0.5) << "LEVER's reliability learnt that the target leaves the candidates";
  EXPECT_LT(edgellm->reliability(), prior - 0.5) << "and so did EdgeLLM's";
  EXPECT_EQ(retrieval->reliability(), prior) << "the draft model's probabilities say nothing about retrieval's";
}

// The session seeds auto's latency profile, from a file (`--latency-profile`) with a draft
// model's costs: the profile it seeds is a model arm's, even behind the retrieval arm.
TEST(AutoTreeBuilder, TheSeededProfileIsAModelArms) {
  std::vector<AutoArm> arms;
  FrontierBuilderOptions raw;
  raw.renormalise_candidates = false;
  arms.push_back({"coordgen", std::make_unique<FrontierTreeBuilder>(raw, "coordgen"), false, ArmSource::kRetrieval});
  arms.push_back({"lever", std::make_unique<FrontierTreeBuilder>(FrontierBuilderOptions{}, "lever")});
  AutoTreeBuilder autob(std::move(arms));
  EXPECT_EQ(autob.latency_profile(), autob.arms()[1].builder->latency_profile());
}

// Retrieval's probabilities sum to l / (l + 1) for a match of l tokens: renormalised within
// the candidate set, a one-token match would look as sure as a long one.
TEST(AcceptanceCalibration, RawProbabilitiesKeepAOneTokenMatchApartFromALongOne) {
  const AcceptanceCalibration renormalised(true), raw(false);
  EXPECT_EQ(renormalised.calibrate(0.5, 0.5), renormalised.calibrate(0.95, 0.95));
  EXPECT_LT(raw.calibrate(0.5, 0.5), raw.calibrate(0.95, 0.95) - 0.3);

  // The target always picks a lone candidate of probability 0.45: the raw calibration learns
  // it in the bucket of 0.45, the renormalised one in the bucket of 1.
  AcceptanceCalibration learn_raw(false), learn_renormalised(true);
  TokenTree tree;
  tree.add(5, TokenTree::kRoot, 0.45f);
  tree.candidates(TokenTree::kRoot) = {{5, 0.45f}};
  for (int i = 0; i < 50; ++i) {
    learn_raw.observe(tree, {{TokenTree::kRoot, 5}});
    learn_renormalised.observe(tree, {{TokenTree::kRoot, 5}});
  }
  EXPECT_GT(learn_raw.calibrate(0.45, 0.45), 0.9);
  EXPECT_GT(learn_renormalised.calibrate(0.45, 0.45), 0.9) << "a lone candidate is renormalised to 1";
  EXPECT_LT(learn_renormalised.calibrate(0.45, 1.0), 0.5) << "its bucket of 0.45 kept the prior";
}

// A new prompt: whether the text repeats itself is the text's own, so the retrieval arm's
// reliability starts again from its prior; the draft model's agreement with the target is
// the pair's, and what the model arms learnt stays.
TEST(AutoTreeBuilder, ANewPromptRestartsOnlyRetrievalsReliability) {
  std::vector<AutoArm> arms;
  arms.push_back({"lever", std::make_unique<FrontierTreeBuilder>(FrontierBuilderOptions{}, "lever")});
  FrontierBuilderOptions raw;
  raw.renormalise_candidates = false;
  arms.push_back({"coordgen", std::make_unique<FrontierTreeBuilder>(raw, "coordgen"), false, ArmSource::kRetrieval});
  AutoTreeBuilder autob(std::move(arms));
  AcceptanceCalibration* lever = autob.arms()[0].builder->acceptance_calibration();
  AcceptanceCalibration* retrieval = autob.arms()[1].builder->acceptance_calibration();
  ASSERT_NE(lever, nullptr);
  ASSERT_NE(retrieval, nullptr);
  const double prior = lever->reliability();
  // Both sources' candidates miss the target's token (9) on every row.
  TokenTree tree;
  tree.add(5, TokenTree::kRoot, 0.6f);
  tree.candidates(TokenTree::kRoot) = {{5, 0.6f}, {7, 0.3f}};
  for (int i = 0; i < 20; ++i) {
    lever->observe(tree, {{TokenTree::kRoot, 9}});
    retrieval->observe(tree, {{TokenTree::kRoot, 9}});
  }
  const double lever_learnt = lever->reliability();
  ASSERT_LT(lever_learnt, prior - 0.5);
  ASSERT_LT(retrieval->reliability(), prior - 0.5);
  autob.begin_generation();
  EXPECT_EQ(retrieval->reliability(), prior) << "retrieval's reliability starts afresh";
  EXPECT_EQ(lever->reliability(), lever_learnt) << "the draft model's is kept";
}

// begin_text() restarts r only: how often the target picks a continuation of a given share
// (h) is kept.
TEST(AcceptanceCalibration, ANewTextRestartsTheReliabilityAndKeepsTheBuckets) {
  AcceptanceCalibration c(false);
  const double prior = c.reliability();
  TokenTree hit;
  hit.add(5, TokenTree::kRoot, 0.45f);
  hit.candidates(TokenTree::kRoot) = {{5, 0.45f}, {6, 0.05f}};
  TokenTree miss = hit;
  for (int i = 0; i < 40; ++i) c.observe(hit, {{TokenTree::kRoot, 6}});   // in the set, the 0.05 one
  for (int i = 0; i < 40; ++i) c.observe(miss, {{TokenTree::kRoot, 9}});  // outside it
  ASSERT_LT(c.reliability(), 0.2);
  const double bucket_of_045 = c.calibrate(0.45, 0.5) / c.reliability();
  ASSERT_LT(bucket_of_045, 0.2) << "the 0.45 continuation was never the target's";
  c.begin_text();
  EXPECT_EQ(c.reliability(), prior);
  EXPECT_NEAR(c.calibrate(0.45, 0.5), prior * bucket_of_045, 1e-12) << "the bucket kept what it learnt";
}

// A chain of 8 is chains of 4 and 2 with more nodes: its cycle tells the selector what
// theirs would have been (tokens exactly, time less the draft steps and the rows, by the
// latency profile), so they stay measured without running. Nothing is inferred for a longer
// chain, from a chain cut short, or for another source's arm.
TEST(AutoTreeBuilder, AChainsCycleMeasuresTheShorterChains) {
  std::vector<AutoArm> arms;
  const auto chain = [&arms](int k, const char* name, ArmSource source = ArmSource::kModel) {
    arms.push_back(
        {name, std::make_unique<StaticTreeBuilder>(std::vector<int>(k, 1), name), false, source, k + 1.0, k});
  };
  chain(8, "chain:8");
  chain(4, "chain:4");
  chain(2, "chain:2");
  chain(12, "chain:12");
  chain(2, "retrieval:2", ArmSource::kRetrieval);
  arms.push_back({"lever", std::make_unique<FrontierTreeBuilder>(FrontierBuilderOptions{}, "lever")});
  AutoTreeBuilder autob(std::move(arms));
  // The profile (LEVER's, the one the session seeds): a pass costs 0.6 ms + 0.05 ms a row.
  LatencyProfile* profile = autob.latency_profile();
  ASSERT_NE(profile, nullptr);
  for (int rows = 1; rows <= 13; ++rows) profile->observe_verify(rows, 10, 0.6e-3 + 0.05e-3 * rows);
  profile->observe_draft(1, 0.05e-3);  // a draft step: 0.05 ms a pass + 0.05 ms a row
  ASSERT_EQ(autob.current_arm(), 0) << "before any build, chain:8 (the first arm) is the current one";

  TokenTree tree;
  for (int d = 0; d < 8; ++d) tree.add(10 + d, d - 1, 0.9f);  // node d below node d - 1
  ASSERT_EQ(tree.max_depth(), 8);
  CycleStats stats;
  stats.context = 10;
  stats.tree_nodes = 8;
  stats.accepted = 3;
  stats.draft_seconds = 1.0e-3;  // 8 steps and 0.2 ms of catch-up that every chain pays
  stats.verify_seconds = 0.6e-3 + 0.05e-3 * 9;
  autob.observe(tree, stats);
  const ArmSelector& sel = autob.selector();
  EXPECT_EQ(sel.cycles(0), 1);
  EXPECT_DOUBLE_EQ(sel.tokens_per_cycle(1), 4.0) << "chain:4 would have accepted the same 3, then its bonus";
  EXPECT_DOUBLE_EQ(sel.tokens_per_cycle(2), 3.0) << "chain:2 only 2 of them";
  EXPECT_EQ(sel.cycles(1), 0);
  EXPECT_EQ(sel.cycles(2), 0);
  // Their time: 4 (6) fewer draft steps of 0.1 ms, and rows.
  EXPECT_NEAR(4.0 / sel.rate(1), 0.6e-3 + 0.6e-3 + 0.05e-3 * 5, 1e-9);
  EXPECT_NEAR(3.0 / sel.rate(2), 0.4e-3 + 0.6e-3 + 0.05e-3 * 3, 1e-9);
  EXPECT_EQ(sel.rate(3), 0.0) << "nothing for a longer chain";
  EXPECT_EQ(sel.rate(4), 0.0) << "nor for a chain from another source";

  // Every draft token accepted: the shorter chains accept theirs too.
  stats.accepted = 8;
  autob.observe(tree, stats);
  EXPECT_NEAR(sel.tokens_per_cycle(1), (4.0 * 0.95 + 5.0) / 1.95, 1e-9);

  // A chain cut short (the context's end): nothing inferred.
  const double rate_before = sel.rate(1);
  TokenTree cut;
  for (int d = 0; d < 5; ++d) cut.add(10 + d, d - 1, 0.9f);
  stats.tree_nodes = 5;
  stats.accepted = 0;
  autob.observe(cut, stats);
  EXPECT_EQ(sel.rate(1), rate_before);
}

// Drafting that ran while the pass's first streamed weights were still being read did not
// lengthen the cycle, so a shorter chain's inferred cycle saves only the drafting past that
// read-ahead (CycleStats::hidden_io_seconds); the rest would have been I/O stall.
TEST(AutoTreeBuilder, AShorterChainSavesOnlyTheDraftingPastTheReadAhead) {
  // chain:4's time per cycle, inferred from one chain:8 cycle whose drafting (1 ms) overlapped
  // `hidden` seconds of read-ahead.
  const auto chain4_seconds = [](double hidden) {
    std::vector<AutoArm> arms;
    for (int k : {8, 4}) {
      const char* name = k == 8 ? "chain:8" : "chain:4";
      arms.push_back({name, std::make_unique<StaticTreeBuilder>(std::vector<int>(k, 1), name), false, ArmSource::kModel,
                      k + 1.0, k});
    }
    arms.push_back({"lever", std::make_unique<FrontierTreeBuilder>(FrontierBuilderOptions{}, "lever")});
    AutoTreeBuilder autob(std::move(arms));
    LatencyProfile* profile = autob.latency_profile();
    for (int rows = 1; rows <= 13; ++rows) profile->observe_verify(rows, 10, 0.6e-3 + 0.05e-3 * rows);
    profile->observe_draft(1, 0.05e-3);  // a draft step: 0.1 ms
    TokenTree tree;
    for (int d = 0; d < 8; ++d) tree.add(10 + d, d - 1, 0.9f);
    CycleStats stats;
    stats.context = 10;
    stats.tree_nodes = 8;
    stats.accepted = 3;
    stats.draft_seconds = 1.0e-3;
    stats.verify_seconds = 0.6e-3 + 0.05e-3 * 9;
    stats.hidden_io_seconds = hidden;
    autob.observe(tree, stats);
    return autob.selector().tokens_per_cycle(1) / autob.selector().rate(1);
  };
  const double verify4 = 0.6e-3 + 0.05e-3 * 5;
  EXPECT_NEAR(chain4_seconds(0), 0.6e-3 + verify4, 1e-9) << "nothing hidden: its 4 steps fewer are saved";
  EXPECT_NEAR(chain4_seconds(0.8e-3), 0.8e-3 + verify4, 1e-9) << "only the 0.2 ms past the read-ahead";
  EXPECT_NEAR(chain4_seconds(2e-3), 1.0e-3 + verify4, 1e-9) << "all of it hidden: only its rows are saved";
}

// The selector is told how many tokens each arm's cycle can emit, so that an arm that cannot
// catch up with the best at its measured cost per cycle (plain decoding, a short chain, when
// every cycle costs a streamed pass) counts as far behind from its first cycle.
TEST(AutoTreeBuilder, EachArmSaysHowManyTokensItsCycleCanEmit) {
  SpecConfig config;
  config.method = SpecConfig::Method::kAuto;
  config.draft_model_path = "draft.gguf";
  config.max_tree_depth = 12;
  std::map<std::string, double> max_tokens;
  std::map<std::string, ArmSource> sources;
  for (const AutoArm& arm : make_auto_arms(config, true, /*parallel_rollouts=*/true)) {
    max_tokens[arm.name] = arm.source != ArmSource::kNone ? arm.max_tokens : 1;
    sources[arm.name] = arm.source;
  }
  const std::map<std::string, double> expected = {{"plain", 1},   {"lever", 13},  {"edgellm", 13},  {"chain:4", 5},
                                                  {"chain:2", 3}, {"chain:8", 9}, {"coordgen", 13}, {"mirror", 5}};
  EXPECT_EQ(max_tokens, expected);
  // Beside the draft model, CoordGen's trees draft from the context alone (gain/cost trees,
  // as deep as LEVER's).
  EXPECT_EQ(sources["plain"], ArmSource::kNone);
  EXPECT_EQ(sources["lever"], ArmSource::kModel);
  EXPECT_EQ(sources["chain:8"], ArmSource::kModel);
  EXPECT_EQ(sources["coordgen"], ArmSource::kRetrieval);
  EXPECT_EQ(sources["mirror"], ArmSource::kModel);
  // Mirror-SD's window only where the session can run its rollouts beside a pass.
  for (const AutoArm& arm : make_auto_arms(config, true)) EXPECT_NE(arm.name, "mirror");

  config.draft_model_path.clear();  // retrieval: CoordGen's trees of at most 16 and 4 nodes
  max_tokens.clear();
  for (const AutoArm& arm : make_auto_arms(config, false)) {
    max_tokens[arm.name] = arm.source != ArmSource::kNone ? arm.max_tokens : 1;
    EXPECT_NE(arm.source, ArmSource::kModel) << arm.name;
  }
  EXPECT_EQ(max_tokens, (std::map<std::string, double>{{"plain", 1}, {"coordgen:16", 17}, {"coordgen:4", 5}}));
}

// A greedy cycle's build context with room for 64 nodes (it points at its own sampler).
struct GreedyBuild {
  GreedyBuild() : sampler(params()) {
    ctx.max_nodes = 64;
    ctx.sampling = params();
    ctx.draft_sampler = &sampler;
  }
  GreedyBuild(const GreedyBuild&) = delete;
  static SamplingParams params() {
    SamplingParams p;
    p.temperature = 0;
    return p;
  }
  Sampler sampler;
  BuildContext ctx;
};

// One cycle of auto: it builds a tree, and the target takes `verify_seconds(tree)` to verify
// it and accepts none of it (it chose token 2 at the root). Returns the policy that built it.
std::string run_cycle(AutoTreeBuilder& autob, Drafter& drafter, const BuildContext& ctx,
                      const std::function<double(const TokenTree&)>& verify_seconds) {
  TokenTree tree;
  EXPECT_TRUE(autob.build(drafter, ctx, &tree).ok());
  CycleStats stats;
  stats.tree_nodes = tree.size();
  stats.rows_verified = tree.size() + 1;
  stats.verify_seconds = verify_seconds(tree);
  stats.visited = {{TokenTree::kRoot, 2}};
  autob.observe(tree, stats);
  return autob.policy();
}

std::string run_cycle(AutoTreeBuilder& autob, Drafter& drafter, const BuildContext& ctx, double verify_seconds) {
  return run_cycle(autob, drafter, ctx, [verify_seconds](const TokenTree&) { return verify_seconds; });
}

// Two arms: plain decoding and a chain of one draft token.
std::vector<AutoArm> plain_and_a_chain_of_one() {
  std::vector<AutoArm> arms;
  arms.push_back({"plain", std::make_unique<StaticTreeBuilder>(std::vector<int>{}, "plain"), false, ArmSource::kNone});
  arms.push_back({"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false,
                  ArmSource::kModel, 2.0, 1});
  return arms;
}

// The plain cycles between a chain's re-measures (stale after 20 cycles, every re-measure
// affordable) when a plain cycle takes `plain_seconds` and the chain's (never accepted)
// three times as long.
std::vector<size_t> plain_runs_between_remeasures(double plain_seconds) {
  ArmSelectorOptions options;
  options.stale_cycles = 20;
  options.explore_share = 0.5;  // every re-measure is affordable: only staleness decides
  options.far_explore_share = 0.5;
  AutoTreeBuilder autob(plain_and_a_chain_of_one(), options);
  test::FixedDrafter drafter(1, 1.0f);  // below every node: token 1, for sure
  GreedyBuild greedy;
  std::string policies;  // p: a plain cycle, c: a chain's
  for (int i = 0; i < 300; ++i) {
    bool empty = false;
    const std::string policy = run_cycle(autob, drafter, greedy.ctx, [&](const TokenTree& tree) {
      empty = tree.empty();
      return empty ? plain_seconds : 3 * plain_seconds;
    });
    policies += empty ? 'p' : 'c';
    EXPECT_EQ(policy, empty ? "plain" : "chain:1");
  }
  // Each arm's first trial, then runs of plain cycles between the chain's re-measures.
  EXPECT_EQ(policies.substr(0, 2), "pc");
  std::vector<size_t> runs;
  size_t start = 2;
  for (size_t c = policies.find('c', start); c != std::string::npos; c = policies.find('c', start)) {
    runs.push_back(c - start);
    start = c + 1;
  }
  EXPECT_GE(runs.size(), 5u) << policies;
  return runs;
}

// Plain decoding chosen as the best arm runs in stretches of 16 cycles without choosing
// again where a plain cycle is cheap (20 us: a resident target) and a look at the context is
// not made (here: no retrieval at all). So a stale arm is re-measured at the end of a
// stretch: after 32 plain cycles, not after the 20 the selector alone waits.
TEST(AutoTreeBuilder, PlainDecodingAsTheBestArmRunsInStretchesWithoutChoosing) {
  for (size_t run : plain_runs_between_remeasures(20e-6))
    EXPECT_EQ(run, 32u) << "stale after 20 plain cycles, re-measured at the end of the 2nd stretch";
}

// Where a plain cycle is dear (1 ms: a streamed target), choosing costs nothing next to it
// and there are no stretches: the stale arm is re-measured when the selector says.
TEST(AutoTreeBuilder, DearPlainCyclesRunWithoutStretches) {
  for (size_t run : plain_runs_between_remeasures(1e-3)) EXPECT_EQ(run, 20u) << "the selector's own staleness";
}

// A stretch of plain decoding lasts only while plain decoding is the best arm: once its own
// slow cycles put another arm ahead, the next cycle is that arm's (each further plain cycle
// would be charged to the regret budget as exploring, and the budget then kept the draft
// model's arms from their first trials for a whole prompt: see build()).
TEST(AutoTreeBuilder, AStretchOfPlainDecodingEndsWhenAnotherArmIsAhead) {
  AutoTreeBuilder autob(plain_and_a_chain_of_one());
  test::FixedDrafter drafter(1, 1.0f);
  GreedyBuild greedy;
  std::string policies;  // p: a plain cycle, c: a chain's
  bool chain_ahead_seen = false;
  for (int i = 0; i < 24; ++i) {
    const bool chain_ahead = autob.selector().best() == 1;
    TokenTree tree;
    ASSERT_TRUE(autob.build(drafter, greedy.ctx, &tree).ok());
    policies += tree.empty() ? 'p' : 'c';
    // After the trials, the chain leads as soon as plain decoding's rate falls below its.
    if (i >= 2 && chain_ahead) {
      chain_ahead_seen = true;
      EXPECT_FALSE(tree.empty()) << "cycle " << i << " ran plain decoding behind the chain: " << policies;
    }
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.rows_verified = tree.size() + 1;
    // The chain: 1 token in 30 us. Plain decoding: 10 us on its trial, then 60 us a token.
    stats.verify_seconds = !tree.empty() ? 30e-6 : (i == 0 ? 10e-6 : 60e-6);
    stats.visited = {{TokenTree::kRoot, 2}};
    autob.observe(tree, stats);
  }
  ASSERT_EQ(policies.substr(0, 3), "pcp") << "each arm's trial, then plain decoding as the best arm, in a stretch";
  EXPECT_TRUE(chain_ahead_seen) << "plain decoding's slow cycles put the chain ahead within the stretch: " << policies;
}

// The first cycle after a prompt's prefill pays one-off costs (the pool's threads woken,
// caches refilled): as an arm's first trial it counts as time, not as the arm's rate. Here
// plain decoding's first cycle of each prompt takes 135 us, as on stories260K at a 100%
// budget, against 30 us after; counted as its trial, that made the chain (1 token in 40
// us) look faster and plain decoding far behind it. An arm with evidence counts such a
// cycle, capped as an outlier.
TEST(AutoTreeBuilder, APromptsFirstCycleIsNoFirstTrial) {
  AutoTreeBuilder autob(plain_and_a_chain_of_one());
  test::FixedDrafter drafter(1, 1.0f);
  GreedyBuild greedy;
  const auto cycle = [&](bool first_of_prompt) {
    if (first_of_prompt) autob.begin_generation();
    // The chain's token (1) is never accepted.
    const std::string policy = run_cycle(autob, drafter, greedy.ctx, [&](const TokenTree& tree) {
      return !tree.empty() ? 40e-6 : (first_of_prompt ? 135e-6 : 30e-6);
    });
    return policy == "plain" ? 'p' : 'c';
  };
  std::string policies;
  for (int i = 0; i < 16; ++i) policies += cycle(i == 0);
  // Plain decoding's first cycle is not its trial: it is tried again, at its real cost.
  EXPECT_EQ(policies.substr(0, 3), "ppc") << policies;
  EXPECT_EQ(autob.selector().cycles(0), std::count(policies.begin(), policies.end(), 'p')) << "counted as run";
  EXPECT_NEAR(autob.selector().rate(0), 1 / 30e-6, 1) << "no 135 us cycle in plain decoding's rate";
  EXPECT_EQ(autob.selector().best(), 0);
  // The next prompt's first cycle, plain decoding's again, is evidence now.
  const double rate_before = autob.selector().rate(0);
  ASSERT_EQ(cycle(true), 'p');
  EXPECT_LT(autob.selector().rate(0), rate_before);
  EXPECT_EQ(autob.selector().best(), 0) << "capped as an outlier, it does not put the chain ahead";
}

// Generations of one cycle each (a prompt's first token comes from the prefill, so a
// generation of 2 tokens is one cycle): every cycle is a prompt's first, and only the first
// of them is left out of the arm's evidence, else no arm would ever be measured.
TEST(AutoTreeBuilder, OneCycleGenerationsStillMeasureTheArms) {
  AutoTreeBuilder autob(plain_and_a_chain_of_one());
  test::FixedDrafter drafter(1, 1.0f);
  GreedyBuild greedy;
  std::string policies;
  for (int i = 0; i < 40; ++i) {
    autob.begin_generation();
    const std::string policy = run_cycle(autob, drafter, greedy.ctx, [](const TokenTree& tree) {
      return tree.empty() ? 30e-6 : 40e-6;  // the chain's token (1) is never accepted
    });
    policies += policy == "plain" ? 'p' : 'c';
  }
  EXPECT_EQ(policies.substr(0, 2), "pp") << "plain decoding's left-out first cycle is retried at once";
  EXPECT_NEAR(autob.selector().rate(0), 1 / 30e-6, 1) << policies;
  EXPECT_GT(autob.selector().rate(1), 0) << "the chain measured too: " << policies;
  EXPECT_EQ(autob.selector().best(), 0) << policies;
}

// An arm that drafts during verification (EdgeLLM's, lending the target's I/O waits): it
// names an anchor after each tree it builds and takes the drafts carried from it.
class LendingArm : public TreeBuilder {
 public:
  const char* name() const override { return "lender"; }
  Status build(Drafter&, const BuildContext& ctx, TokenTree* tree) override {
    tree->clear();
    tree->add(3, TokenTree::kRoot, 0.9f);
    ++builds;
    carried_builds += ctx.carried ? 1 : 0;
    return Status::Ok();
  }
  bool provisional_anchor(int32_t* leaf, const NodeDistribution** dist) const override {
    *leaf = 0;
    *dist = nullptr;
    return true;
  }
  bool accepts_carried() const override { return true; }
  int builds = 0, carried_builds = 0;
};

// Auto drafts during verification only through the arm that built the tree, and the
// drafts carried from that (held by the drafter as drafted) go back to that arm, whatever
// the selector would choose: no other arm knows to skip them.
TEST(AutoTreeBuilder, CarriedDraftsGoBackToTheArmThatLent) {
  std::vector<AutoArm> arms;
  arms.push_back({"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false,
                  ArmSource::kModel, 2.0, 1});
  arms.push_back({"lender", std::make_unique<LendingArm>(), false, ArmSource::kModel, 2.0});
  AutoTreeBuilder autob(std::move(arms));
  auto& lender = static_cast<LendingArm&>(*autob.arms()[1].builder);
  test::FixedDrafter drafter(1, 1.0f);
  GreedyBuild greedy;
  const BuildContext& ctx = greedy.ctx;
  const auto cycle = [&](const BuildContext& c, double seconds) { return run_cycle(autob, drafter, c, seconds); };
  int32_t leaf = -1;
  const NodeDistribution* dist = nullptr;
  // Each arm's first trial: the chain's (fast: 1 ms), then the lender's (slow: 1 s).
  ASSERT_EQ(cycle(ctx, 1e-3), "chain:1");
  EXPECT_FALSE(autob.accepts_carried());
  EXPECT_FALSE(autob.provisional_anchor(&leaf, &dist)) << "the chain does not draft during verification";
  ASSERT_EQ(cycle(ctx, 1.0), "lender");
  EXPECT_TRUE(autob.accepts_carried());
  EXPECT_TRUE(autob.provisional_anchor(&leaf, &dist)) << "the lender's anchor, forwarded";
  EXPECT_EQ(leaf, 0);
  // Its verification confirmed drafts carried into the next cycle: the lender builds it,
  // though the selector now prefers the chain by a factor of a thousand.
  CarriedDrafts carried;
  carried.tree.add(4, TokenTree::kRoot, 0.8f);
  BuildContext with_carried = ctx;
  with_carried.carried = &carried;
  EXPECT_EQ(cycle(with_carried, 1.0), "lender");
  EXPECT_EQ(lender.carried_builds, 1);
  EXPECT_EQ(autob.current_arm(), 1) << "and the cycle counts in the lender's rate";
  EXPECT_EQ(autob.selector().cycles(1), 2);
  // Nothing carried: the selector's choice again.
  EXPECT_EQ(cycle(ctx, 1e-3), "chain:1");
  EXPECT_EQ(lender.builds, 2);
}

// Runs `cycles` cycles of a one-arm auto whose arm prunes; a pruned cycle (the session
// offering its pruner and the arm's switch taking it) emits 1 token in 1 ms, an unpruned
// one 2 tokens in 1.1 ms. Returns how many cycles were pruned.
int pruned_cycles(AutoTreeBuilder& autob, int cycles, bool offered = true) {
  test::FixedDrafter drafter(1, 1.0f);
  GreedyBuild greedy;
  int pruned = 0;
  for (int i = 0; i < cycles; ++i) {
    TokenTree tree;
    EXPECT_TRUE(autob.build(drafter, greedy.ctx, &tree).ok());
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.rows_verified = tree.size() + 1;
    stats.pruning_offered = offered;
    const bool prunes = offered && autob.wants_pruning();
    pruned += prunes ? 1 : 0;
    stats.rows_pruned = prunes ? 1 : 0;
    stats.accepted = prunes ? 0 : 1;
    stats.verify_seconds = prunes ? 1e-3 : 1.1e-3;
    stats.visited = {{TokenTree::kRoot, 1}, {0, prunes ? 2 : 1}};
    autob.observe(tree, stats);
  }
  return pruned;
}

std::vector<AutoArm> one_pruning_arm() {
  std::vector<AutoArm> arms;
  arms.push_back({"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), /*prune=*/true,
                  ArmSource::kModel, 2.0, 1});
  return arms;
}

// Whether an arm's trees are pruned is measured (a MeasuredSwitch per arm): pruning, tried
// first, loses here (rows saved, tokens lost), so after its first block and the unpruned
// one the arm runs unpruned but for re-measures; what the switch learnt starts the next
// session unpruned. Cycles where the session offers no pruner measure nothing.
TEST(AutoTreeBuilder, AnArmPrunesOnlyWhilePruningMeasurablyPays) {
  AutoTreeBuilder autob(one_pruning_arm());
  EXPECT_EQ(pruned_cycles(autob, 100, /*offered=*/false), 0);
  EXPECT_TRUE(autob.wants_pruning()) << "no pruner offered: nothing measured, pruning still comes first";
  EXPECT_EQ(pruned_cycles(autob, MeasuredSwitch::kBlockCycles), MeasuredSwitch::kBlockCycles);
  EXPECT_EQ(pruned_cycles(autob, MeasuredSwitch::kBlockCycles), 0) << "then a block unpruned";
  const int pruned = pruned_cycles(autob, 1000);
  EXPECT_GT(pruned, 0) << "pruning is re-measured now and then";
  EXPECT_LE(pruned, 1000 / 10);

  const AutoProfile profile = autob.profile();
  ASSERT_NE(profile.find("chain:1/prune"), nullptr);
  ASSERT_NE(profile.find("chain:1/no-prune"), nullptr);
  AutoTreeBuilder later(one_pruning_arm());
  later.start_from(profile);
  EXPECT_FALSE(later.wants_pruning()) << "the next session starts unpruned";
  EXPECT_LE(pruned_cycles(later, 100), MeasuredSwitch::kBlockCycles);
}

// A model arm's cycles under a cold acceptance calibration (priors, not this pair) count as
// one cycle's evidence once the shared calibration is warm: the arm keeps its rate (a lower
// bound) and is measured again soon. An arm without a calibration (a chain's fixed shape)
// keeps its evidence.
TEST(AutoTreeBuilder, CyclesUnderAColdCalibrationAreMeasuredAfresh) {
  std::vector<AutoArm> arms;
  arms.push_back({"edgellm",
                  std::make_unique<EdgeLlmTreeBuilder>(EdgeLlmConfig{}, /*max_nodes=*/1, /*max_depth=*/1, "edgellm"),
                  false, ArmSource::kModel, 2.0});
  arms.push_back({"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false,
                  ArmSource::kModel, 2.0, 1});
  ArmSelectorOptions options;
  options.explore_share = 0.5;  // both arms keep running
  options.stale_cycles = 2;
  AutoTreeBuilder autob(std::move(arms), options);
  const AcceptanceCalibration* calibration = autob.arms()[0].builder->acceptance_calibration();
  ASSERT_NE(calibration, nullptr);
  test::FixedDrafter drafter(1, 1.0f);
  GreedyBuild greedy;
  int calibrated_cycles = 0;
  bool warmed = false;
  for (int i = 0; i < 200 && !warmed; ++i) {
    TokenTree tree;
    ASSERT_TRUE(autob.build(drafter, greedy.ctx, &tree).ok());
    ASSERT_LE(tree.size(), 1);
    if (tree.empty()) tree.add(1, TokenTree::kRoot, 1.0f);
    tree.candidates(TokenTree::kRoot) = {{1, 1.0f}};  // the row the calibration learns from
    CycleStats stats;
    stats.tree_nodes = 1;
    stats.rows_verified = 2;
    stats.accepted = 1;
    stats.verify_seconds = 1e-3;
    stats.visited = {{TokenTree::kRoot, 1}, {0, 2}};
    calibrated_cycles += autob.current_arm() == 0 ? 1 : 0;
    const double calibrated_rate = autob.selector().rate(0);
    autob.observe(tree, stats);
    warmed = calibration->rows_observed() >= 32;
    if (!warmed && calibrated_cycles > 0) {
      EXPECT_GT(autob.selector().rate(0), 0) << "until then its cycles count";
    } else if (warmed) {
      EXPECT_GT(calibrated_rate + autob.selector().rate(0), 0) << "it had evidence";
    }
  }
  ASSERT_TRUE(warmed);
  ASSERT_GT(calibrated_cycles, 2);
  EXPECT_EQ(autob.selector().cycles(0), calibrated_cycles) << "its cycles stay counted as run";
  EXPECT_NEAR(autob.selector().evidence(0).recent.weight, 1.0, 1e-9) << "but as one cycle's evidence";
  EXPECT_NEAR(autob.selector().rate(0), 2 / 1e-3, 1e-6) << "of their rate";
  EXPECT_GT(autob.selector().evidence(1).recent.weight, 1.0)
      << "the chain's shape does not depend on the calibration: all its cycles count";
  TokenTree tree;
  ASSERT_TRUE(autob.build(drafter, greedy.ctx, &tree).ok());
  EXPECT_EQ(autob.current_arm(), 0) << "measured again at once";
}

}  // namespace

// Mirror-SD's rollouts run beside the verification of the mirror arm's trees only (the
// builder that built the tree says so), and those passes, which ran on the target's
// narrower pool, do not teach the other arms what a pass costs.
TEST(AutoTreeBuilder, OnlyTheMirrorArmsPassesRunRolloutsAndTheyTeachNoOtherArmsProfile) {
  std::vector<AutoArm> arms;
  FrontierBuilderOptions gain_per_cost;
  gain_per_cost.objective = FrontierBuilderOptions::Objective::kGainPerCost;
  arms.push_back(
      {"lever", std::make_unique<FrontierTreeBuilder>(gain_per_cost, "lever"), false, ArmSource::kModel, 2.0});
  arms.push_back({"mirror", std::make_unique<MirrorChainBuilder>(2, "mirror"), false, ArmSource::kModel, 3.0});
  AutoTreeBuilder autob(std::move(arms));
  LatencyProfile& lever_profile = *autob.arms()[0].builder->latency_profile();
  test::FixedDrafter drafter(2, 0.9f);
  GreedyBuild greedy;
  const auto cycle = [&](double seconds) { return run_cycle(autob, drafter, greedy.ctx, seconds); };
  // Each arm's first trial: LEVER's (slow), then the mirror arm's (fast), a 2-token chain.
  ASSERT_EQ(cycle(1.0), "lever");
  EXPECT_FALSE(autob.wants_parallel_rollouts());
  const uint32_t samples = lever_profile.verify_samples(3, 0);  // of 3-row passes (the mirror arm's)
  ASSERT_EQ(cycle(1e-3), "mirror");
  EXPECT_TRUE(autob.wants_parallel_rollouts()) << "the mirror arm's, forwarded";
  EXPECT_TRUE(autob.accepts_carried()) << "a reused rollout goes back to it";
  EXPECT_EQ(lever_profile.verify_samples(3, 0), samples) << "a narrowed pass is not a pass of LEVER's";
  // The mirror arm leads now; its cycles keep teaching LEVER's profile nothing.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(cycle(1e-3), "mirror");
  EXPECT_EQ(lever_profile.verify_samples(3, 0), samples);
}

}  // namespace sf
