// AutoTreeBuilder: what a cycle teaches about the draft and the target does not depend on
// which arm built its tree, so every arm that learns it learns it from every cycle. An arm
// that runs rarely (LEVER's, when its first cycles were unlucky) would otherwise shape its
// trees with a calibration learnt from a handful of its own cycles.
#include "spec/auto_tree_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spec/edgellm_tree_builder.h"
#include "spec/frontier_tree_builder.h"
#include "spec/static_tree_builder.h"

namespace sf {
namespace {

TEST(AutoTreeBuilder, EveryArmsCalibrationLearnsFromTheCyclesOfTheOthers) {
  std::vector<AutoArm> arms;
  arms.push_back({"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1")});
  arms.push_back({"lever", std::make_unique<FrontierTreeBuilder>(FrontierBuilderOptions{}, "lever")});
  arms.push_back({"edgellm", std::make_unique<EdgeLlmTreeBuilder>(EdgeLlmConfig{}, 64, 12, "edgellm")});
  AutoTreeBuilder autob(std::move(arms));
  ASSERT_EQ(autob.current_arm(), 0) << "before any build, the first arm is the current one";
  AcceptanceCalibration* lever = autob.arms()[1].builder->acceptance_calibration();
  AcceptanceCalibration* edgellm = autob.arms()[2].builder->acceptance_calibration();
  ASSERT_NE(lever, nullptr);
  ASSERT_NE(edgellm, nullptr);
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
  for (const AutoArm& arm : make_auto_arms(config, true)) {
    max_tokens[arm.name] = arm.source != ArmSource::kNone ? arm.max_tokens : 1;
    sources[arm.name] = arm.source;
  }
  const std::map<std::string, double> expected = {{"plain", 1},   {"lever", 13},  {"edgellm", 13},    {"chain:4", 5},
                                                  {"chain:2", 3}, {"chain:8", 9}, {"coordgen:16", 17}};
  EXPECT_EQ(max_tokens, expected);
  // Beside the draft model, CoordGen's trees draft from the context alone.
  EXPECT_EQ(sources["plain"], ArmSource::kNone);
  EXPECT_EQ(sources["lever"], ArmSource::kModel);
  EXPECT_EQ(sources["chain:8"], ArmSource::kModel);
  EXPECT_EQ(sources["coordgen:16"], ArmSource::kRetrieval);

  config.draft_model_path.clear();  // retrieval: CoordGen's trees of at most 16 and 4 nodes
  max_tokens.clear();
  for (const AutoArm& arm : make_auto_arms(config, false)) {
    max_tokens[arm.name] = arm.source != ArmSource::kNone ? arm.max_tokens : 1;
    EXPECT_NE(arm.source, ArmSource::kModel) << arm.name;
  }
  EXPECT_EQ(max_tokens, (std::map<std::string, double>{{"plain", 1}, {"coordgen:16", 17}, {"coordgen:4", 5}}));
}

}  // namespace
}  // namespace sf
