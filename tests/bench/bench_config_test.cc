// Flag values of `specflash bench` to a BenchConfig: parsing errors name the bad value,
// validation catches impossible combinations, and the run plan puts every baseline first.
#include "bench/bench_config.h"

#include <gtest/gtest.h>

namespace sf::bench {
namespace {

BenchConfig valid_config() {
  BenchConfig c;
  c.methods = {BenchMethod::kAr, BenchMethod::kFlashAr};
  c.budgets = *parse_budgets("50%");
  c.datasets = {{"tinystories", "", 3}};
  return c;
}

void expect_error(const Status& s, const std::string& substring) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << substring;
  EXPECT_NE(s.message().find(substring), std::string::npos) << s.message();
}

TEST(BenchFlags, Methods) {
  auto m = parse_methods("tree,ar,flash-ar,ar");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(*m, (std::vector<BenchMethod>{BenchMethod::kTree, BenchMethod::kAr, BenchMethod::kFlashAr}));
  expect_error(parse_methods("ar,medusa").status(), "unknown method 'medusa'");
  expect_error(parse_methods("").status(), "unknown method ''");
}

TEST(BenchFlags, MirrorKappaAndExitInOneRun) {
  using K = BenchMethod::Kind;
  auto m = parse_methods("mirror,mirror:4,mirror:8@25%,mirror:2@11,mirror:@75%,mirror:8@25%");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 5u) << "the duplicate counts once";
  EXPECT_EQ((*m)[0], (BenchMethod{K::kMirror, 0, 0}));
  EXPECT_EQ((*m)[2], (BenchMethod{K::kMirror, 8, -25}));
  EXPECT_EQ((*m)[3], (BenchMethod{K::kMirror, 2, 11}));
  EXPECT_EQ(method_name((*m)[2]), "mirror:8@25%");
  EXPECT_EQ(method_name((*m)[3]), "mirror:2@11");
  EXPECT_EQ(method_name((*m)[4]), "mirror:@75%");
  BenchConfig c = valid_config();
  c.draft_model_path = "draft.gguf";
  const SpecConfig quarter = spec_for(c, (*m)[2]);
  EXPECT_EQ(quarter.method, SpecConfig::Method::kMirror);
  EXPECT_EQ(quarter.mirror.kappa, 8);
  EXPECT_EQ(quarter.mirror.exit_layer, -1);
  EXPECT_EQ(quarter.mirror.exit_percent, 25);
  EXPECT_EQ(spec_for(c, (*m)[3]).mirror.exit_layer, 11);
  for (const char* bad : {"mirror:0", "mirror:33", "mirror:8@", "mirror:8@100%", "mirror:8@x", "mirror:@0"})
    expect_error(parse_methods(bad).status(), "mirror takes");
}

// `edgellm` grows the most likely node (the default shape); the paper's pacer is the
// `edgellm-paced` row, and `edgellm-rawconf` is that pacer on raw probabilities.
TEST(BenchFlags, EdgeLlmRowsNameTheirTreeShape) {
  using Shape = EdgeLlmConfig::Shape;
  auto m = parse_methods("edgellm,edgellm-paced,edgellm-rawconf,edgellm-nopacer");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 4u);
  BenchConfig c = valid_config();
  c.draft_model_path = "draft.gguf";
  const SpecConfig likely = spec_for(c, (*m)[0]), paced = spec_for(c, (*m)[1]), raw = spec_for(c, (*m)[2]);
  EXPECT_EQ(likely.method, SpecConfig::Method::kEdgeLlm);
  EXPECT_EQ(likely.edgellm.shape, Shape::kMostLikely);
  EXPECT_TRUE(likely.edgellm.pacer);
  EXPECT_EQ(paced.edgellm.shape, Shape::kPaced);
  EXPECT_TRUE(paced.edgellm.calibrated_pacer);
  EXPECT_EQ(raw.edgellm.shape, Shape::kPaced);
  EXPECT_FALSE(raw.edgellm.calibrated_pacer);
  EXPECT_FALSE(spec_for(c, (*m)[3]).edgellm.pacer) << "nopacer: one chain";
  EXPECT_EQ(method_name((*m)[1]), "edgellm-paced");
  expect_error(parse_methods("edgellm-likely").status(), "unknown method 'edgellm-likely'");
}

TEST(BenchFlags, Budgets) {
  auto b = parse_budgets("100%,50%,0%,300M");
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->size(), 4u);
  EXPECT_EQ((*b)[0].budget.kind, MemoryBudget::Kind::kUnlimited);
  EXPECT_EQ((*b)[1].label, "50%");
  EXPECT_DOUBLE_EQ((*b)[1].budget.share, 0.5);
  EXPECT_EQ((*b)[2].budget.kind, MemoryBudget::Kind::kModelShare);
  EXPECT_EQ((*b)[3].budget.bytes, 300u << 20);
  expect_error(parse_budgets("50%,150%").status(), "budget '150%'");
  expect_error(parse_budgets("lots").status(), "budget 'lots'");
  expect_error(parse_budgets("50%,").status(), "empty memory budget");
}

TEST(BenchFlags, TreeWidths) {
  auto w = parse_tree_widths("3,2,1");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, (std::vector<int>{3, 2, 1}));
  for (const char* bad : {"3,0", "a", "2,,1", "", "65"}) EXPECT_FALSE(parse_tree_widths(bad).ok()) << bad;
}

TEST(BenchValidate, AcceptsAPlainConfig) { EXPECT_TRUE(validate(valid_config()).ok()); }

TEST(BenchValidate, SpeculativeMethodsNeedADraft) {
  BenchConfig c = valid_config();
  c.methods.push_back(BenchMethod::kChain);
  expect_error(validate(c), "chain needs a draft model");
  c.methods = {BenchMethod::kTree};
  expect_error(validate(c), "tree needs a draft model");
  c.draft_model_path = "draft.gguf";
  EXPECT_TRUE(validate(c).ok());
}

TEST(BenchValidate, OtherErrors) {
  BenchConfig c = valid_config();
  c.methods.clear();
  expect_error(validate(c), "no methods");
  c = valid_config();
  c.budgets.clear();
  expect_error(validate(c), "no memory budgets");
  c.methods = {BenchMethod::kAr};  // ar alone needs no budget
  EXPECT_TRUE(validate(c).ok());
  c = valid_config();
  c.n_predict = 0;
  expect_error(validate(c), "--n-predict");
  c = valid_config();
  c.datasets.clear();
  expect_error(validate(c), "no prompts");
  c.prompt_file = "p.txt";
  EXPECT_TRUE(validate(c).ok());
}

TEST(BenchPlan, ArFirstThenEachBudgetsMethods) {
  BenchConfig c = valid_config();
  c.methods = {BenchMethod::kChain, BenchMethod::kFlashAr, BenchMethod::kTree};  // ar not listed
  c.budgets = *parse_budgets("100%,0%");
  c.draft_model_path = "draft.gguf";
  c.draft_len = 5;
  c.tree_widths = {3, 2, 1};
  SessionOptions base;
  base.model_path = "target.gguf";
  base.n_threads = 2;
  const auto runs = plan_runs(c, base);
  ASSERT_EQ(runs.size(), 7u);
  EXPECT_EQ(runs[0].method, BenchMethod::kAr) << "ar runs first when comparing, listed or not";
  EXPECT_EQ(runs[0].options.mem_budget.kind, MemoryBudget::Kind::kUnlimited);
  EXPECT_FALSE(runs[0].options.spec.enabled());
  const BenchMethod order[] = {BenchMethod::kFlashAr, BenchMethod::kChain, BenchMethod::kTree};
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].method, order[(i - 1) % 3]) << i;
    EXPECT_EQ(runs[i].budget.label, i <= 3 ? "100%" : "0%");
    EXPECT_EQ(runs[i].options.model_path, "target.gguf");
    EXPECT_EQ(runs[i].options.n_threads, 2);
  }
  EXPECT_EQ(runs[4].options.mem_budget.kind, MemoryBudget::Kind::kModelShare);
  EXPECT_FALSE(runs[4].options.spec.enabled());
  EXPECT_EQ(runs[5].options.spec.method, SpecConfig::Method::kChain);
  EXPECT_EQ(runs[5].options.spec.draft_model_path, "draft.gguf");
  EXPECT_EQ(runs[5].options.spec.draft_len, 5);
  EXPECT_EQ(runs[6].options.spec.method, SpecConfig::Method::kTree);
  EXPECT_EQ(runs[6].options.spec.tree_widths, (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(runs[6].options.spec.draft_len, 3) << "the widths fix the tree depth";

  c.compare_to_ar = false;
  EXPECT_EQ(plan_runs(c, base).size(), 6u) << "no ar run when not listed and not comparing";
}

TEST(BenchPlan, MethodsWithParametersRunInListedOrder) {
  BenchConfig c = valid_config();
  auto m = parse_methods("lever,chain:8,flash-ar,opt-tree:32,chain:4,lever-noprune");
  ASSERT_TRUE(m.ok()) << m.status().message();
  c.methods = *m;
  c.draft_model_path = "draft.gguf";
  const auto runs = plan_runs(c, SessionOptions{});
  std::vector<std::string> names;
  for (const auto& r : runs) names.push_back(method_name(r.method));
  EXPECT_EQ(names, (std::vector<std::string>{"ar", "flash-ar", "lever", "chain:8", "opt-tree:32", "chain:4",
                                             "lever-noprune"}));
  EXPECT_EQ(runs[3].options.spec.draft_len, 8);
  EXPECT_EQ(runs[4].options.spec.node_budget, 32);
  EXPECT_TRUE(runs[2].options.spec.prune.enabled);
  EXPECT_FALSE(runs[6].options.spec.prune.enabled);
  EXPECT_EQ(runs[6].options.spec.method, SpecConfig::Method::kLever);
  EXPECT_FALSE(parse_methods("tree:3").ok()) << "only chain and opt-tree take a number";
  EXPECT_FALSE(parse_methods("chain:0").ok());
  EXPECT_FALSE(parse_methods("lever-fast").ok());
}

TEST(BenchPlan, ContextMargin) {
  BenchConfig c = valid_config();
  EXPECT_EQ(spec_context_margin(c), 1);
  c.methods.push_back(BenchMethod::kChain);
  c.draft_len = 6;
  EXPECT_EQ(spec_context_margin(c), 7);
  c.methods.push_back(BenchMethod::kTree);
  c.tree_widths = {3, 2, 1};  // 3 + 6 + 6 nodes
  EXPECT_EQ(spec_context_margin(c), 16);
  c.tree_widths.clear();
  c.draft_len = 3;  // default widths {2, 2, 1}: 2 + 4 + 4 nodes
  EXPECT_EQ(spec_context_margin(c), 11);
}

TEST(BenchCats, SelfSpeculativeMethodsNeedNoDraftModel) {
  auto methods = parse_methods("cats:3,cats-noadapter,kangaroo:7");
  ASSERT_TRUE(methods.ok()) << methods.status().message();
  ASSERT_EQ(methods->size(), 3u);
  EXPECT_EQ(method_name((*methods)[0]), "cats:3");
  BenchConfig c = valid_config();
  c.methods = {(*methods)[1], (*methods)[2]};
  EXPECT_TRUE(validate(c).ok()) << "no --draft needed";
  const SpecConfig k = spec_for(c, (*methods)[2]);
  EXPECT_EQ(k.method, SpecConfig::Method::kKangaroo);
  EXPECT_EQ(k.draft_len, 7);
  EXPECT_TRUE(k.draft_model_path.empty());
  c.methods = {(*methods)[0]};
  expect_error(validate(c), "--cats-draft-adapter");
  c.cats.draft_adapter = "dm.gguf";
  c.cats.verifier_adapter = "sv.gguf";
  EXPECT_TRUE(validate(c).ok());
  EXPECT_EQ(spec_for(c, (*methods)[0]).cats.verifier_adapter, "sv.gguf");
  EXPECT_TRUE(spec_for(c, (*methods)[1]).cats.draft_adapter.empty()) << "cats-noadapter drops the adapters";
  EXPECT_TRUE(spec_for(c, (*methods)[2]).cats.verifier_adapter.empty()) << "kangaroo has no shallow verifier";
  expect_error(parse_methods("lever:3").status(), "take a positive number");
}

TEST(BenchCats, TheGridOfBenchCatsShParses) {
  // scripts/bench_cats.sh builds this list: every self-speculative method at every gamma.
  const std::string grid =
      "flash-ar,kangaroo:3,kangaroo:5,kangaroo:7,kangaroo:10,cats-noadapter:3,cats-noadapter:5,cats-noadapter:7,"
      "cats-noadapter:10,cats:3,cats:5,cats:7,cats:10";
  auto methods = parse_methods(grid);
  ASSERT_TRUE(methods.ok()) << methods.status().message();
  ASSERT_EQ(methods->size(), 13u);
  std::string names;
  for (const BenchMethod& m : *methods) names += (names.empty() ? "" : ",") + method_name(m);
  EXPECT_EQ(names, grid) << "names round-trip, so the tables say which gamma each row ran";
  BenchConfig c = valid_config();
  c.cats.draft_adapter = "dm.gguf";
  c.cats.verifier_adapter = "sv.gguf";
  c.methods = *methods;
  EXPECT_TRUE(validate(c).ok());
  const int gammas[] = {3, 5, 7, 10};
  for (size_t i = 1; i < methods->size(); ++i)
    EXPECT_EQ(spec_for(c, (*methods)[i]).draft_len, gammas[(i - 1) % 4]) << method_name((*methods)[i]);
  EXPECT_EQ(spec_for(c, (*methods)[4]).method, SpecConfig::Method::kKangaroo);
  EXPECT_EQ(spec_for(c, (*methods)[8]).method, SpecConfig::Method::kCats);
  EXPECT_TRUE(spec_for(c, (*methods)[8]).cats.draft_adapter.empty()) << "cats-noadapter:10 drops the adapters";
  EXPECT_EQ(spec_for(c, (*methods)[12]).cats.draft_adapter, "dm.gguf");
  expect_error(parse_methods("cats:0").status(), "take a positive number");
  expect_error(parse_methods("cats-noadapter:x").status(), "cats/cats-noadapter/kangaroo:GAMMA");
}

}  // namespace
}  // namespace sf::bench

namespace sf::bench {
namespace {

TEST(BenchFlags, RetrievalMethodsNeedNoDraftExceptTheHybrid) {
  auto m = parse_methods("coordgen,coordgen-nocalib,coordgen-noreuse,pld:8,sam");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 5u);
  EXPECT_EQ(method_name((*m)[3]), "pld:8");
  BenchConfig c;
  c.methods = *m;
  c.budgets = *parse_budgets("100%");
  c.datasets = {DatasetSpec{"spec_bench", "", 2}};
  EXPECT_TRUE(validate(c).ok()) << "retrieval needs no draft model";
  EXPECT_EQ(spec_for(c, (*m)[1]).method, SpecConfig::Method::kCoordGen);
  EXPECT_FALSE(spec_for(c, (*m)[1]).retrieval.calibrate);
  EXPECT_TRUE(spec_for(c, (*m)[1]).retrieval.reuse);
  EXPECT_EQ(spec_for(c, (*m)[3]).node_budget, 8);
  c.methods = *parse_methods("coordgen-hybrid");
  EXPECT_FALSE(validate(c).ok()) << "the hybrid needs --draft";
  c.draft_model_path = "draft.gguf";
  EXPECT_TRUE(validate(c).ok());
  EXPECT_EQ(spec_for(c, *parse_methods("pld")->begin()).draft_model_path, "") << "pld never gets the draft";
  // A history store warms whichever coordgen run follows: one per bench run.
  c.retrieval.history_dir = "/tmp/h";
  c.methods = *parse_methods("coordgen,coordgen-nocalib");
  EXPECT_FALSE(validate(c).ok());
  c.methods = *parse_methods("flash-ar,coordgen,pld");
  EXPECT_TRUE(validate(c).ok());
}

}  // namespace
}  // namespace sf::bench

namespace sf::bench {
namespace {

TEST(BenchAuto, ExplorePercentParsesAndReachesTheSpec) {
  auto methods = parse_methods("auto,auto:1");
  ASSERT_TRUE(methods.ok()) << methods.status().message();
  ASSERT_EQ(methods->size(), 2u) << "auto and auto:1 are different rows";
  EXPECT_EQ(method_name((*methods)[1]), "auto:1");
  BenchConfig c = valid_config();
  EXPECT_DOUBLE_EQ(spec_for(c, (*methods)[0]).auto_explore_share, 0.03) << "the default";
  EXPECT_DOUBLE_EQ(spec_for(c, (*methods)[1]).auto_explore_share, 0.01);
  EXPECT_EQ(spec_for(c, (*methods)[1]).method, SpecConfig::Method::kAuto);
  expect_error(parse_methods("auto:100").status(), "auto:EXPLORE_PERCENT (1..99)");
  expect_error(parse_methods("auto:0").status(), "take a positive number");
}

TEST(BenchAuto, AutoKeepsItsProfileWhereTheBenchSaysAndAutoColdNowhere) {
  auto methods = parse_methods("auto,auto-cold,auto-cold:2");
  ASSERT_TRUE(methods.ok()) << methods.status().message();
  ASSERT_EQ(methods->size(), 3u);
  EXPECT_EQ(method_name((*methods)[1]), "auto-cold");
  BenchConfig c = valid_config();
  c.auto_profile_dir = "/tmp/profiles";
  EXPECT_EQ(spec_for(c, (*methods)[0]).auto_profile_dir, "/tmp/profiles");
  EXPECT_EQ(spec_for(c, (*methods)[1]).method, SpecConfig::Method::kAuto);
  EXPECT_EQ(spec_for(c, (*methods)[1]).auto_profile_dir, "") << "auto-cold starts afresh every session";
  EXPECT_DOUBLE_EQ(spec_for(c, (*methods)[2]).auto_explore_share, 0.02);
}

// auto:N learns only from its own sessions: with auto's profile it would start from the
// arms auto's exploring measured, and its smaller share would look better for it.
TEST(BenchAuto, EachExploreShareKeepsItsOwnProfile) {
  auto methods = parse_methods("auto,auto:1,auto:2");
  ASSERT_TRUE(methods.ok()) << methods.status().message();
  BenchConfig c = valid_config();
  c.auto_profile_dir = "/tmp/profiles";
  EXPECT_EQ(spec_for(c, (*methods)[0]).auto_profile_dir, "/tmp/profiles");
  EXPECT_EQ(spec_for(c, (*methods)[1]).auto_profile_dir, "/tmp/profiles/explore-1pct");
  EXPECT_EQ(spec_for(c, (*methods)[2]).auto_profile_dir, "/tmp/profiles/explore-2pct");
  c.auto_profile_dir.clear();
  EXPECT_EQ(spec_for(c, (*methods)[1]).auto_profile_dir, "") << "no profile: none for auto:N either";
}

}  // namespace
}  // namespace sf::bench
