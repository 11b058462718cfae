// HybridDrafter's source selection (what `--spec auto` uses to run a retrieval arm beside
// its draft-model arms): draft() asks only the selected sources; the draft model follows
// every commit, and the retrieval drafter, told only of the cycles it drafts in, catches up
// on the committed sequence when it next drafts, to the same drafts as if it had followed.
#include "spec/hybrid_drafter.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sampling/sampler.h"
#include "spec/auto_tree_builder.h"
#include "spec/cycle_stats.h"
#include "spec/fixed_drafter.h"
#include "spec/frontier_tree_builder.h"
#include "spec/retrieval_drafter.h"
#include "spec/static_tree_builder.h"

namespace sf {
namespace {

using test::FixedDrafter;

// A hybrid over a model that proposes token 5 (p 0.7) and retrieval that proposes 9 (p 0.9),
// after the prompt {1, 2}, with a greedy sampler.
class HybridSources : public ::testing::Test {
 protected:
  HybridSources() {
    auto model_owned = std::make_unique<FixedDrafter>(5, 0.7f);
    auto retrieval_owned = std::make_unique<FixedDrafter>(9, 0.9f);
    model = model_owned.get();
    retrieval = retrieval_owned.get();
    hybrid = std::make_unique<HybridDrafter>(std::move(model_owned), std::move(retrieval_owned));
    greedy.temperature = 0;
    sampler = std::make_unique<Sampler>(greedy);
  }

  FixedDrafter* model = nullptr;
  FixedDrafter* retrieval = nullptr;
  std::unique_ptr<HybridDrafter> hybrid;
  SamplingParams greedy;
  std::unique_ptr<Sampler> sampler;
  const std::vector<int32_t> history = {1, 2};

  // Every pass of 1-16 rows costs `seconds` whatever its rows (I/O-bound): the latency
  // profile the look prices the retrieval tree with. Most tests use 10 ms passes.
  static void every_pass_costs(AutoTreeBuilder& autob, double seconds) {
    for (int rows = 1; rows <= 16; ++rows)
      for (int i = 0; i < 3; ++i) autob.latency_profile()->observe_verify(rows, 10, seconds);
  }
  static void every_pass_costs_10ms(AutoTreeBuilder& autob) { every_pass_costs(autob, 0.01); }
  // The retrieval arm auto's look builds: gain/cost trees of at most 8 nodes over the raw
  // retrieval probabilities.
  static AutoArm look_arm() {
    FrontierBuilderOptions raw;
    raw.renormalise_candidates = false;
    raw.max_nodes = 8;
    return {"coordgen", std::make_unique<FrontierTreeBuilder>(raw, "coordgen"), false, ArmSource::kRetrieval, 13};
  }
  // A chain of 4 model tokens beside the look's retrieval arm.
  static std::vector<AutoArm> chain4_beside_look() {
    std::vector<AutoArm> arms;
    arms.push_back({"chain:4", std::make_unique<StaticTreeBuilder>(std::vector<int>{1, 1, 1, 1}, "chain:4"), false,
                    ArmSource::kModel, 20});
    arms.push_back(look_arm());
    return arms;
  }
  // 40 cycles of auto's first arm, `tokens_per_cycle` tokens in 10 ms each (so it is the best).
  static void observe_best_cycles(AutoTreeBuilder& autob, double tokens_per_cycle) {
    TokenTree empty;
    CycleStats best_cycle;
    best_cycle.accepted = static_cast<int>(tokens_per_cycle) - 1;
    best_cycle.verify_seconds = 0.01;
    for (int i = 0; i < 40; ++i) autob.observe(empty, best_cycle);
    ASSERT_EQ(autob.selector().best(), 0);
  }
  // auto over a chain of one model token (measured at `chain_tokens_per_cycle` per 10 ms
  // cycle) and the look's retrieval arm (measured at 1 token per 12 ms, so the selector does
  // not explore it); every pass costs 10 ms whatever its rows (I/O-bound).
  static std::unique_ptr<AutoTreeBuilder> chain_beside_look(double chain_tokens_per_cycle) {
    std::vector<AutoArm> arms;
    arms.push_back(
        {"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false, ArmSource::kModel, 2});
    arms.push_back(look_arm());
    auto autob = std::make_unique<AutoTreeBuilder>(std::move(arms));
    every_pass_costs_10ms(*autob);
    ArmEvidence chain, retrieval_alone;
    for (int i = 0; i < 40; ++i) {
      chain.add(0.995, chain_tokens_per_cycle, 0.01);
      retrieval_alone.add(0.995, 1.0, 0.012);
    }
    AutoProfile profile;
    profile.arms = {{"chain:1", chain}, {"coordgen", retrieval_alone}};
    autob->start_from(profile);
    return autob;
  }
  // A hybrid whose retrieval is a sure match (token 9, p 0.95) beside the model's token 5
  // (p 0.7), drafting from the model as auto's session sets it.
  static std::unique_ptr<HybridDrafter> sure_match_hybrid() {
    auto h = std::make_unique<HybridDrafter>(std::make_unique<FixedDrafter>(5, 0.7f),
                                             std::make_unique<FixedDrafter>(9, 0.95f));
    h->set_sources(true, false);
    return h;
  }
  // auto's first build over `h`, from a fresh reset, at a 10-token context.
  void build_first_cycle(AutoTreeBuilder& autob, HybridDrafter& h, TokenTree* tree) {
    BuildContext ctx;
    ctx.max_nodes = 16;
    ctx.context = 10;
    ctx.sampling = greedy;
    ctx.draft_sampler = sampler.get();
    h.reset(history);
    ASSERT_TRUE(h.begin_cycle(history, greedy, *sampler).ok());
    ASSERT_TRUE(autob.build(h, ctx, tree).ok());
  }
};

TEST_F(HybridSources, DraftsFromTheSelectedSourcesAndRetrievalCatchesUpWhenItDrafts) {
  EXPECT_TRUE(hybrid->drafts_from_model() && hybrid->drafts_from_retrieval()) << "both by default";
  hybrid->reset(history);
  TokenTree tree;
  std::vector<NodeDistribution> out;

  // Both: the merge of the two.
  ASSERT_TRUE(hybrid->begin_cycle(history, greedy, *sampler).ok());
  EXPECT_EQ(retrieval->cycles, 1);
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].probs.size(), 2u);
  EXPECT_EQ(out[0].probs[0].id, 9);
  EXPECT_EQ(out[0].probs[1].id, 5);

  // Retrieval alone: the model is not asked.
  hybrid->set_sources(false, true);
  const int model_nodes = model->drafted_nodes;
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].probs.size(), 1u);
  EXPECT_EQ(out[0].probs[0].id, 9);
  EXPECT_EQ(model->drafted_nodes, model_nodes) << "the model drafted nothing";

  // The model alone: retrieval is not asked.
  hybrid->set_sources(true, false);
  const int retrieval_nodes = retrieval->drafted_nodes;
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].probs.size(), 1u);
  EXPECT_EQ(out[0].probs[0].id, 5);
  EXPECT_FLOAT_EQ(out[0].probs[0].p, 0.7f);
  EXPECT_EQ(retrieval->drafted_nodes, retrieval_nodes) << "retrieval drafted nothing";

  // A commit reaches both sources that began the cycle.
  const int32_t node = tree.add(5, TokenTree::kRoot, 0.7f);
  hybrid->commit(tree, {node}, 6);
  EXPECT_EQ(model->sequence, (std::vector<int32_t>{1, 2, 5, 6}));
  EXPECT_EQ(retrieval->sequence, (std::vector<int32_t>{1, 2, 5, 6}));

  // A cycle of the model alone: retrieval is neither begun nor told of the commit.
  const std::vector<int32_t> longer = {1, 2, 5, 6};
  ASSERT_TRUE(hybrid->begin_cycle(longer, greedy, *sampler).ok());
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  hybrid->commit(tree, {node}, 8);
  EXPECT_EQ(model->cycles, 2);
  EXPECT_EQ(model->sequence, (std::vector<int32_t>{1, 2, 5, 6, 5, 8}));
  EXPECT_EQ(retrieval->cycles, 1);
  EXPECT_EQ(retrieval->sequence, (std::vector<int32_t>{1, 2, 5, 6}));

  // Retrieval drafts again (auto's builder switches sources after begin_cycle): it begins
  // the cycle then, with the whole history, and is told of its commit.
  const std::vector<int32_t> longest = {1, 2, 5, 6, 5, 8};
  ASSERT_TRUE(hybrid->begin_cycle(longest, greedy, *sampler).ok());
  EXPECT_EQ(retrieval->cycles, 1) << "not begun before it drafts";
  hybrid->set_sources(false, true);
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  EXPECT_EQ(retrieval->cycles, 2);
  EXPECT_EQ(retrieval->last_history, longest);
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  EXPECT_EQ(retrieval->cycles, 2) << "begun once per cycle";
  hybrid->commit(tree, {}, 3);
  EXPECT_EQ(retrieval->sequence, (std::vector<int32_t>{1, 2, 5, 6, 3}))
      << "the fake does not catch up; the commit reached it";
}

// The target's predictions at rejected nodes (CoordGen's reuse of rejected tails) cost an
// LM-head row each: a hybrid asks for them only after a cycle its retrieval drafted in.
TEST_F(HybridSources, AsksForRejectedPredictionsOnlyAfterRetrievalDrafted) {
  retrieval->wants_rejected = true;
  hybrid->set_sources(true, false);  // auto's session default: the draft model
  hybrid->reset(history);
  TokenTree tree;
  std::vector<NodeDistribution> out;
  const auto ask = [&] {  // what the session's loop does after verification
    if (hybrid->wants_rejected_predictions()) hybrid->observe_rejected(tree, {}, [](int32_t) { return 0; });
  };
  // A model cycle: nothing asked.
  ASSERT_TRUE(hybrid->begin_cycle(history, greedy, *sampler).ok());
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  ask();
  hybrid->commit(tree, {}, 3);
  EXPECT_EQ(retrieval->rejected_observations, 0);
  // A retrieval cycle (auto's builder switches the source for the build): asked once.
  const std::vector<int32_t> longer = {1, 2, 3};
  ASSERT_TRUE(hybrid->begin_cycle(longer, greedy, *sampler).ok());
  hybrid->set_sources(false, true);
  ASSERT_TRUE(hybrid->draft(tree, {TokenTree::kRoot}, &out).ok());
  hybrid->set_sources(true, false);
  ask();
  hybrid->commit(tree, {}, 4);
  EXPECT_EQ(retrieval->rejected_observations, 1);
  // Both sources (CoordGen's hybrid): every cycle.
  hybrid->set_sources(true, true);
  const std::vector<int32_t> longest = {1, 2, 3, 4};
  ASSERT_TRUE(hybrid->begin_cycle(longest, greedy, *sampler).ok());
  ask();
  EXPECT_EQ(retrieval->rejected_observations, 2);
}

// A retrieval drafter left out of cycles drafts exactly what one told of every commit does:
// RetrievalDrafter::begin_cycle extends its automaton by the tokens it missed.
TEST(RetrievalCatchUp, ADrafterLeftOutOfCyclesDraftsAsOneThatFollowedThem) {
  RetrievalOptions options;  // coordgen's live source; no calibration (no prefill), no reuse
  options.calibrate = false;
  options.reuse = false;
  RetrievalDrafter followed(options, nullptr), caught_up(options, nullptr);
  const std::vector<int32_t> prompt = {4, 7, 1, 4, 7, 2, 4};
  followed.reset(prompt);
  caught_up.reset(prompt);
  SamplingParams greedy;
  greedy.temperature = 0;
  Sampler sampler(greedy);
  std::vector<int32_t> history = prompt;
  TokenTree empty;
  std::vector<NodeDistribution> out;
  // Three cycles that only `followed` takes part in, each committing one accepted token and
  // a bonus.
  for (const auto& [accepted, bonus] : {std::pair<int32_t, int32_t>{7, 1}, {4, 7}, {2, 4}}) {
    ASSERT_TRUE(followed.begin_cycle(history, greedy, sampler).ok());
    ASSERT_TRUE(followed.draft(empty, {TokenTree::kRoot}, &out).ok());
    TokenTree tree;
    const int32_t node = tree.add(accepted, TokenTree::kRoot, 1.0f);
    followed.commit(tree, {node}, bonus);
    history.push_back(accepted);
    history.push_back(bonus);
  }
  ASSERT_TRUE(followed.begin_cycle(history, greedy, sampler).ok());
  ASSERT_TRUE(caught_up.begin_cycle(history, greedy, sampler).ok());
  EXPECT_EQ(caught_up.live().n_states(), followed.live().n_states());
  EXPECT_EQ(caught_up.live().whole_text().length, followed.live().whole_text().length);
  // The same drafts below the root and below a drafted child.
  std::vector<NodeDistribution> a, b;
  ASSERT_TRUE(followed.draft(empty, {TokenTree::kRoot}, &a).ok());
  ASSERT_TRUE(caught_up.draft(empty, {TokenTree::kRoot}, &b).ok());
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_FALSE(a[0].probs.empty()) << "the context repeats: retrieval has a continuation";
  ASSERT_EQ(a[0].probs.size(), b[0].probs.size());
  for (size_t i = 0; i < a[0].probs.size(); ++i) {
    EXPECT_EQ(a[0].probs[i].id, b[0].probs[i].id);
    EXPECT_FLOAT_EQ(a[0].probs[i].p, b[0].probs[i].p);
  }
}

// auto's arms each draft from their own source of the session's HybridDrafter: a retrieval
// arm's tree holds retrieval's tokens and costs no draft-model step, a model arm's the
// model's; after each build the hybrid is back to the session's own choice.
TEST_F(HybridSources, AutoArmsDraftFromTheirOwnSource) {
  hybrid->set_sources(true, false);  // what a session of auto sets
  std::vector<AutoArm> arms;
  arms.push_back({"retrieval:2", std::make_unique<StaticTreeBuilder>(std::vector<int>{1, 1}, "retrieval:2"), false,
                  ArmSource::kRetrieval, 3});
  arms.push_back(
      {"chain:2", std::make_unique<StaticTreeBuilder>(std::vector<int>{1, 1}, "chain:2"), false, ArmSource::kModel, 3});
  AutoTreeBuilder autob(std::move(arms));
  hybrid->reset(history);
  BuildContext ctx;
  ctx.max_nodes = 16;
  ctx.sampling = greedy;
  ctx.draft_sampler = sampler.get();
  for (const auto& [arm, token] : {std::pair<int, int32_t>{0, 9}, std::pair<int, int32_t>{1, 5}}) {
    const int model_nodes = model->drafted_nodes, retrieval_nodes = retrieval->drafted_nodes;
    TokenTree tree;
    ASSERT_TRUE(hybrid->begin_cycle(history, greedy, *sampler).ok());
    ASSERT_TRUE(autob.build(*hybrid, ctx, &tree).ok());
    ASSERT_EQ(autob.current_arm(), arm) << "arms are first tried in their order";
    ASSERT_EQ(tree.size(), 2);
    for (int32_t n = 0; n < tree.size(); ++n) EXPECT_EQ(tree.node(n).token, token) << autob.policy();
    EXPECT_EQ(model->drafted_nodes > model_nodes, arm == 1) << autob.policy();
    EXPECT_EQ(retrieval->drafted_nodes > retrieval_nodes, arm == 0) << autob.policy();
    EXPECT_TRUE(hybrid->drafts_from_model() && !hybrid->drafts_from_retrieval()) << "the session's choice is back";
    CycleStats stats;
    stats.tree_nodes = 2;
    stats.rows_verified = 3;
    stats.verify_seconds = 1e-3;
    stats.visited = {{TokenTree::kRoot, 7}};
    autob.observe(tree, stats);
  }
}

// Beside a draft model, auto first looks at what the context offers: the retrieval arm's
// gain/cost tree replaces the chosen arm's when it expects more tokens per second than that
// arm measures, and is dropped (retrieval not told of the cycle) when it does not.
TEST_F(HybridSources, AutoTakesTheRetrievalTreeOnlyWhereItBeatsTheChosenArm) {
  for (const double chosen_tokens_per_cycle : {1.0, 10.0}) {
    SCOPED_TRACE(chosen_tokens_per_cycle);
    auto model_owned = std::make_unique<FixedDrafter>(5, 0.7f);
    auto retrieval_owned = std::make_unique<FixedDrafter>(9, 0.95f);  // a long match: sure
    FixedDrafter* m = model_owned.get();
    FixedDrafter* r = retrieval_owned.get();
    r->wants_rejected = true;
    HybridDrafter h(std::move(model_owned), std::move(retrieval_owned));
    h.set_sources(true, false);
    const std::unique_ptr<AutoTreeBuilder> auto_owned = chain_beside_look(chosen_tokens_per_cycle);
    AutoTreeBuilder& autob = *auto_owned;
    TokenTree tree;
    ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
    EXPECT_EQ(autob.current_arm(), 0) << "the selector chose the chain";
    EXPECT_TRUE(h.drafts_from_model() && !h.drafts_from_retrieval()) << "the session's choice is back";
    EXPECT_GT(r->drafted_nodes, 0) << "auto looked at the context";
    ASSERT_GT(tree.size(), 0);
    const bool taken = chosen_tokens_per_cycle < 2;
    EXPECT_STREQ(autob.policy(), taken ? "coordgen" : "chain:1");
    EXPECT_EQ(m->drafted_nodes > 0, !taken) << "the model drafts only a tree that is used";
    for (int32_t n = 0; n < tree.size(); ++n) EXPECT_EQ(tree.node(n).token, taken ? 9 : 5);
    if (taken) {
      EXPECT_GT(tree.size(), 2) << "a sure match is worth several rows when rows are free";
    }
    EXPECT_EQ(h.wants_rejected_predictions(), taken) << "rejected tails only for a retrieval tree";
    h.commit(tree, {}, 3);
    EXPECT_EQ(r->sequence.size(), taken ? 3u : 2u) << "retrieval is told only of a cycle whose tree it drafted";
  }
}

// A look whose tree was not taken still teaches the retrieval calibration: the target's
// tokens of the cycle show how the dropped tree's walk would have gone. Learning from the
// takes alone (the looks estimated best) kept the calibration optimistic.
TEST_F(HybridSources, AutosRetrievalCalibrationLearnsFromALookItDidNotTake) {
  for (const int32_t target_token : {7, 9}) {  // retrieval proposes 9; the target picks 7 or 9
    SCOPED_TRACE(target_token);
    const std::unique_ptr<HybridDrafter> hybrid_sure = sure_match_hybrid();
    HybridDrafter& h = *hybrid_sure;
    // The chain emits 10 tokens per 10 ms cycle: no retrieval tree beats it.
    const std::unique_ptr<AutoTreeBuilder> auto_owned = chain_beside_look(10.0);
    AutoTreeBuilder& autob = *auto_owned;
    AcceptanceCalibration* calibration = autob.arms()[1].builder->acceptance_calibration();
    ASSERT_NE(calibration, nullptr);
    const double prior = calibration->reliability();
    TokenTree tree;
    ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
    ASSERT_STREQ(autob.policy(), "chain:1") << "the look was made and not taken";
    ASSERT_EQ(tree.size(), 1);
    // The target rejects the chain's token 5 and picks `target_token` at the root.
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.rows_verified = 2;
    stats.verify_seconds = 0.01;
    stats.visited = {{TokenTree::kRoot, target_token}};
    autob.observe(tree, stats);
    if (target_token == 9) {
      EXPECT_GT(calibration->reliability(), prior) << "the target picked retrieval's token";
    } else {
      EXPECT_LT(calibration->reliability(), prior - 0.2) << "the target's token was not among retrieval's";
    }
    // The next cycle (no look made) teaches it nothing more.
    const double after = calibration->reliability();
    autob.observe(tree, stats);
    EXPECT_EQ(calibration->reliability(), after);
  }
}

// The untaken look's walk along the target's tokens is also a cycle of the retrieval arm
// that auto did not run: an inferred cycle (no cycle counted, no regret) of the tokens the
// walk reached plus the target's bonus, in the cycle's time with the retrieval tree's rows
// (here the same count) and the look's drafting. A walk cut short by the end of the
// committed tokens, or a pruned pass, measures nothing.
TEST_F(HybridSources, AnUntakenLookIsAnInferredCycleOfTheRetrievalArm) {
  struct Case {
    const char* what;
    int look_nodes;          // the retrieval tree's size cap (its nodes are all token 9)
    int32_t target_token;    // the target's token at the root (the chain's 5 rejected)
    int rows_pruned;         // of the cycle's pass
    double expected_tokens;  // of the inferred cycle (0: none inferred)
  };
  for (const Case& c : {Case{"the walk takes the tree's one node and the bonus", 1, 9, 0, 2.0},
                        Case{"the walk stops at the root", 1, 7, 0, 1.0}, Case{"the walk is cut short", 8, 9, 0, 0.0},
                        Case{"a pruned pass", 1, 7, 1, 0.0}}) {
    SCOPED_TRACE(c.what);
    const std::unique_ptr<HybridDrafter> hybrid_sure = sure_match_hybrid();
    HybridDrafter& h = *hybrid_sure;
    std::vector<AutoArm> arms;
    arms.push_back(
        {"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false, ArmSource::kModel, 2});
    AutoArm look = look_arm();
    FrontierBuilderOptions capped;
    capped.renormalise_candidates = false;
    capped.max_nodes = c.look_nodes;
    look.builder = std::make_unique<FrontierTreeBuilder>(capped, "coordgen");
    arms.push_back(std::move(look));
    AutoTreeBuilder autob(std::move(arms));
    every_pass_costs_10ms(autob);
    // The chain emits 10 tokens per 10 ms cycle (no retrieval tree beats it); retrieval was
    // measured at 1 token per 12 ms.
    ArmEvidence chain, retrieval_alone;
    for (int i = 0; i < 40; ++i) {
      chain.add(0.995, 10.0, 0.01);
      retrieval_alone.add(0.995, 1.0, 0.012);
    }
    AutoProfile profile;
    profile.arms = {{"chain:1", chain}, {"coordgen", retrieval_alone}};
    autob.start_from(profile);
    TokenTree tree;
    ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
    ASSERT_STREQ(autob.policy(), "chain:1") << "the look was made and not taken";
    const ArmEvidence before = autob.selector().evidence(1).recent;
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.rows_verified = tree.size() + 1;
    stats.rows_pruned = c.rows_pruned;
    stats.draft_seconds = 0.001;  // the look's and the chain's
    stats.verify_seconds = 0.01;
    stats.visited = {{TokenTree::kRoot, c.target_token}};
    autob.observe(tree, stats);
    const ArmEvidence after = autob.selector().evidence(1).recent;
    EXPECT_EQ(autob.selector().cycles(1), 0) << "inferred, not run";
    if (c.expected_tokens == 0) {
      EXPECT_EQ(after.weight, before.weight) << "nothing inferred";
      EXPECT_EQ(after.tokens, before.tokens);
      continue;
    }
    const double decay = 0.95;  // ArmSelectorOptions::decay
    EXPECT_NEAR(after.weight, decay * before.weight + 1, 1e-9);
    EXPECT_NEAR(after.tokens, decay * before.tokens + c.expected_tokens, 1e-9);
    // The pass's 10 ms, and the look's drafting: its real time, at most the cycle's 1 ms of
    // drafting (a look preempted on a loaded machine is capped there, not a failure).
    const double seconds = after.seconds - decay * before.seconds;
    EXPECT_GE(seconds, 0.01);
    EXPECT_LE(seconds, 0.011 + 1e-12);
  }
}

// An arm's first trial has no rate yet: the retrieval tree must then beat the best arm's
// rate, which the trial hopes to beat. A good tree defers the trial to a cycle where the
// context offers less; one that cannot beat the best leaves the trial to run.
TEST_F(HybridSources, AutoDefersAnArmsFirstTrialWhereTheContextOffersMore) {
  for (const double best_tokens_per_cycle : {1.0, 12.0}) {
    SCOPED_TRACE(best_tokens_per_cycle);
    const std::unique_ptr<HybridDrafter> hybrid_sure = sure_match_hybrid();
    HybridDrafter& h = *hybrid_sure;
    std::vector<AutoArm> arms;
    arms.push_back(look_arm());
    arms.push_back(
        {"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false, ArmSource::kModel, 2});
    AutoTreeBuilder autob(std::move(arms));
    every_pass_costs_10ms(autob);
    // Only the retrieval arm is measured (the best, at `best_tokens_per_cycle` per 10 ms);
    // the chain has never run.
    ArmEvidence retrieval_alone;
    for (int i = 0; i < 40; ++i) retrieval_alone.add(0.995, best_tokens_per_cycle, 0.01);
    AutoProfile profile;
    profile.arms = {{"coordgen", retrieval_alone}};
    autob.start_from(profile);
    TokenTree tree;
    ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
    ASSERT_EQ(autob.current_arm(), 1) << "the selector chose the chain's first trial";
    ASSERT_GT(tree.size(), 0);
    const bool deferred = best_tokens_per_cycle < 2;
    EXPECT_STREQ(autob.policy(), deferred ? "coordgen" : "chain:1");
    for (int32_t n = 0; n < tree.size(); ++n) EXPECT_EQ(tree.node(n).token, deferred ? 9 : 5);
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.rows_verified = tree.size() + 1;
    stats.verify_seconds = 0.01;
    autob.observe(tree, stats);
    EXPECT_EQ(autob.selector().cycles(1), deferred ? 0 : 1) << "a deferred trial is not counted as made";
  }
}

// While the selector explores an arm slower than the best, the retrieval tree must still
// beat the best arm's rate: measured against the explored arm's, the look took a retrieval
// tree on most cycles that re-measured plain decoding or a short chain, each at half the
// best arm's rate, and each only put the exploring off (EMULATED 25 MB/s, 0%: 80 of 643
// cycles). A tree that beats the best is still taken.
TEST_F(HybridSources, AutoTakesTheRetrievalTreeOnlyWhereItBeatsTheBestArmWhileExploring) {
  for (const double best_tokens_per_cycle : {4.0, 12.0}) {
    SCOPED_TRACE(best_tokens_per_cycle);
    const std::unique_ptr<HybridDrafter> hybrid_sure = sure_match_hybrid();
    HybridDrafter& h = *hybrid_sure;
    std::vector<AutoArm> arms = chain4_beside_look();
    arms.push_back(
        {"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false, ArmSource::kModel, 20});
    AutoTreeBuilder autob(std::move(arms));
    every_pass_costs_10ms(autob);
    // The retrieval arm measured slow; chain:1 thinly (2 cycles of 2 tokens in 10 ms), so
    // the selector re-measures it next.
    ArmEvidence retrieval_alone, thin;
    for (int i = 0; i < 40; ++i) retrieval_alone.add(0.995, 1.0, 0.012);
    for (int i = 0; i < 2; ++i) thin.add(0.995, 2.0, 0.01);
    AutoProfile profile;
    profile.arms = {{"coordgen", retrieval_alone}, {"chain:1", thin}};
    autob.start_from(profile);
    ASSERT_NO_FATAL_FAILURE(observe_best_cycles(autob, best_tokens_per_cycle));  // chain:4, the best
    TokenTree tree;
    ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
    ASSERT_EQ(autob.current_arm(), 2) << "the selector re-measures the thinly measured chain:1";
    ASSERT_GT(tree.size(), 0);
    // The sure retrieval tree of 8 nodes expects ~5 tokens per 10 ms pass: more than the
    // explored arm's 2, less than 12.
    const bool taken = best_tokens_per_cycle < 5;
    EXPECT_STREQ(autob.policy(), taken ? "coordgen" : "chain:1");
    for (int32_t n = 0; n < tree.size(); ++n) EXPECT_EQ(tree.node(n).token, taken ? 9 : 5);
  }
}

// A look's walk that the cycle's tokens cut short goes on along the next cycles' tokens
// (the same text's): the retrieval arm's inferred cycle is the whole walk, told where it
// leaves the tree. Left out at the first cycle's end (as it was), the arm was inferred on
// its shorter trees only.
TEST_F(HybridSources, AnUntakenLooksWalkGoesOnAlongTheNextCycles) {
  const std::unique_ptr<HybridDrafter> hybrid_sure = sure_match_hybrid();
  HybridDrafter& h = *hybrid_sure;
  std::unique_ptr<AutoTreeBuilder> autob = chain_beside_look(10.0);
  TokenTree tree;
  ASSERT_NO_FATAL_FAILURE(build_first_cycle(*autob, h, &tree));
  ASSERT_STREQ(autob->policy(), "chain:1") << "the look was made and not taken";
  const ArmEvidence before = autob->selector().evidence(1).recent;
  // Each cycle emits the target's token at the root (the chain's 5 rejected): 9, 9, then 7.
  // The retrieval tree is a chain of 9s (8 nodes): its walk takes two and stops at the 7.
  for (const int32_t target_token : {9, 9, 7}) {
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.rows_verified = tree.size() + 1;
    stats.draft_seconds = 0.001;
    stats.verify_seconds = 0.01;
    stats.visited = {{TokenTree::kRoot, target_token}};
    autob->observe(tree, stats);
    const ArmEvidence now = autob->selector().evidence(1).recent;
    if (target_token != 7) {
      EXPECT_EQ(now.weight, before.weight) << "the walk is still on the tree";
      // The next cycle, whose own look's walk waits for the first to end.
      tree.clear();
      ASSERT_TRUE(h.begin_cycle(history, greedy, *sampler).ok());
      BuildContext ctx;
      ctx.max_nodes = 16;
      ctx.context = 10;
      ctx.sampling = greedy;
      ctx.draft_sampler = sampler.get();
      ASSERT_TRUE(autob->build(h, ctx, &tree).ok());
      ASSERT_STREQ(autob->policy(), "chain:1");
      continue;
    }
    // Two inferred cycles: the first look's walk (its two nodes and the bonus), then this
    // cycle's own look, whose walk stops at the root (the bonus alone).
    const double decay = 0.95;  // ArmSelectorOptions::decay
    EXPECT_NEAR(now.weight, decay * (decay * before.weight + 1) + 1, 1e-9);
    EXPECT_NEAR(now.tokens, decay * (decay * before.tokens + 3.0) + 1.0, 1e-9);
    // Each look cycle's inferred time: its 10 ms pass and the look's drafting (at most 1 ms).
    const double seconds = now.seconds - decay * decay * before.seconds;
    EXPECT_GE(seconds, (1 + decay) * 0.01);
    EXPECT_LE(seconds, (1 + decay) * 0.011 + 1e-12);
  }
  EXPECT_EQ(autob->selector().cycles(1), 0) << "inferred, not run";
}

// Re-measuring the retrieval arm (a stale arm the selector explores) is a look at its tree:
// verified as the arm's own cycle only where the tree is expected to beat the best arm's
// rate; else the best arm runs, the look's walk is the arm's inferred cycle, and nothing is
// charged to exploring. At a 100% budget on stories260K, re-measuring it in cycles of its
// own was ~0.9% of auto's time (~10 a session of 1,024 tokens, ~60-170 us for ~1.3 tokens
// against ~30 us for plain decoding's one).
TEST_F(HybridSources, ReMeasuringTheRetrievalArmIsALookUnlessItsTreePays) {
  for (const double best_tokens_per_cycle : {4.0, 12.0}) {
    SCOPED_TRACE(best_tokens_per_cycle);
    const std::unique_ptr<HybridDrafter> hybrid_sure = sure_match_hybrid();
    HybridDrafter& h = *hybrid_sure;
    // Exploring may spend half the time, and an arm not run for 10 cycles is stale.
    ArmSelectorOptions options;
    options.explore_share = 0.5;
    options.far_explore_share = 0.5;
    options.stale_cycles = 10;
    AutoTreeBuilder autob(chain4_beside_look(), options);
    every_pass_costs_10ms(autob);
    ArmEvidence retrieval_alone;
    for (int i = 0; i < 40; ++i) retrieval_alone.add(0.995, 1.0, 0.012);
    AutoProfile profile;
    profile.arms = {{"coordgen", retrieval_alone}};
    autob.start_from(profile);
    ASSERT_NO_FATAL_FAILURE(observe_best_cycles(autob, best_tokens_per_cycle));  // chain:4, the best
    const double regret_before = autob.selector().regret_seconds();
    const ArmEvidence before = autob.selector().evidence(1).recent;
    TokenTree tree;
    ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
    // The sure retrieval tree of 8 nodes expects ~5 tokens per 10 ms pass: more than 4,
    // less than 12.
    const bool own_cycle = best_tokens_per_cycle < 5;
    EXPECT_STREQ(autob.policy(), own_cycle ? "coordgen" : "chain:4");
    EXPECT_EQ(autob.current_arm(), own_cycle ? 1 : 0);
    ASSERT_GT(tree.size(), 0);
    for (int32_t n = 0; n < tree.size(); ++n) EXPECT_EQ(tree.node(n).token, own_cycle ? 9 : 5);
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.rows_verified = tree.size() + 1;
    stats.draft_seconds = 0.001;
    stats.verify_seconds = 0.01;
    stats.visited = {{TokenTree::kRoot, 7}};  // the target's token is in neither tree
    autob.observe(tree, stats);
    EXPECT_EQ(autob.selector().cycles(1), own_cycle ? 1 : 0);
    const ArmEvidence after = autob.selector().evidence(1).recent;
    EXPECT_NEAR(after.weight, 0.95 * before.weight + 1, 1e-9) << "measured either way";
    if (!own_cycle) {
      EXPECT_NEAR(after.tokens, 0.95 * before.tokens + 1.0, 1e-9) << "the walk stopped at the root";
      EXPECT_EQ(autob.selector().regret_seconds(), regret_before) << "no cycle explored";
      // Measured now: the next choice is the best arm, not the same re-measure again.
      ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
      EXPECT_EQ(autob.current_arm(), 0);
    }
  }
}

// At a session's start the best rate is plain decoding's, which nearly every retrieval tree
// beats: the look puts a first trial off a few cycles in a row, not for good. Passes of a
// second here: auto skips a look that took more than 1% of a cycle (real time), and with
// 10 ms passes one look preempted on a loaded CI machine skipped the next (2026-12-05).
TEST_F(HybridSources, AutoDefersAFirstTrialOnlyAFewCyclesInARow) {
  const std::unique_ptr<HybridDrafter> hybrid_sure = sure_match_hybrid();
  HybridDrafter& h = *hybrid_sure;
  std::vector<AutoArm> arms;
  arms.push_back({"plain", std::make_unique<StaticTreeBuilder>(std::vector<int>{}, "plain"), false, ArmSource::kNone});
  arms.push_back(look_arm());
  arms.push_back(
      {"chain:1", std::make_unique<StaticTreeBuilder>(std::vector<int>{1}, "chain:1"), false, ArmSource::kModel, 20});
  AutoTreeBuilder autob(std::move(arms));
  every_pass_costs(autob, 1.0);
  // Plain decoding and retrieval measured (1 token a second); the chain never ran.
  ArmEvidence plain;
  for (int i = 0; i < 40; ++i) plain.add(0.995, 1.0, 1.0);
  AutoProfile profile;
  profile.arms = {{"plain", plain}, {"coordgen", plain}};
  autob.start_from(profile);
  std::vector<std::string> built;
  for (int cycle = 0; cycle < 5; ++cycle) {
    TokenTree tree;
    ASSERT_NO_FATAL_FAILURE(build_first_cycle(autob, h, &tree));
    ASSERT_EQ(autob.current_arm(), 2) << "the chain's first trial, cycle " << cycle;
    built.push_back(autob.policy());
    CycleStats stats;
    stats.tree_nodes = tree.size();
    stats.verify_seconds = 1.0;
    if (built.back() == "chain:1") break;  // the trial ran; its cycle would now be observed
    autob.observe(tree, stats);
  }
  EXPECT_EQ(built, (std::vector<std::string>{"coordgen", "coordgen", "coordgen", "chain:1"}));
}

}  // namespace
}  // namespace sf
