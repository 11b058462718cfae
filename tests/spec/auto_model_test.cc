// `--spec auto` end to end on stories260K with its distilled draft (the real pair), and on
// stories260K alone (auto then drafts by retrieval):
//  - greedy output equals plain decoding whatever policy auto picks, resident and streamed
//    (EMULATED slow storage);
//  - where a target pass is expensive (0%, EMULATED 25 MB/s: a pass costs tens of draft
//    steps) auto spends most cycles on a drafting policy, and its drafts are accepted;
//  - every arm it has is tried, and the cycles name the policy that built their tree;
//  - sampling stays lossless: the first two tokens follow the target's distributions;
//  - its EdgeLLM arm drafts during the target's I/O waits where its switch lends, and the
//    drafts kept start that arm's next tree; sampling stays lossless with drafts carried;
//  - its mirror arm drafts Mirror-SD's rollouts beside the target's later layers, and a
//    reused rollout starts that arm's next window; sampling stays lossless with them;
//  - with a profile directory, a second session starts on the arm the first one found best
//    (a first session starts with plain decoding), and an unreadable profile means a fresh
//    start that rewrites it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "chi_square.h"
#include "engine/session.h"
#include "gguf/per_test_scratch.h"
#include "spec/auto_profile.h"
#include "spec/auto_tree_builder.h"
#include "spec/draft_model_drafter.h"
#include "spec/mirror_rollout.h"
#include "spec_test_util.h"
#include "test_paths.h"

namespace sf {
namespace {

using test::generate;
using test::target_distribution;

// lend_only_exposed: EdgeLLM's gate on lending (EdgeLlmConfig), for its arm in auto. Off in
// the test of the mechanism: at these EMULATED rates the read-ahead hides all of the
// drafting, so the gate would lend nothing.
std::unique_ptr<Session> make_session(SpecConfig::Method method, bool with_draft, const char* budget,
                                      double io_bandwidth, const std::string& auto_profile_dir = "",
                                      bool lend_only_exposed = true, int n_threads = 2) {
  SessionOptions o;
  o.model_path = test::shared_path("models/stories260K.gguf");
  o.n_threads = n_threads;
  o.n_ctx = 256;
  o.mem_budget = *MemoryBudget::parse(budget);
  o.io_bandwidth = io_bandwidth;
  o.spec.method = method;
  o.spec.auto_profile_dir = auto_profile_dir;
  o.spec.edgellm.lend_only_exposed = lend_only_exposed;
  if (with_draft && method != SpecConfig::Method::kNone)
    o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

const std::vector<std::string> kPrompts = {
    "Once upon a time",
    "Lily wanted to play with her big red ball. One day",
    "The little dog was sad because",
    "Tom and Sue went to the park. Tom and Sue went to the park.",
    "One day, a bird",
    "She looked at the sky and",
};

struct AutoCase {
  const char* name;
  bool with_draft;
  const char* budget;
  double io_bandwidth;  // EMULATED bytes/s; 0: the real disk (or nothing streams)
  bool drafting_pays;   // a pass costs tens of draft steps: auto must mostly draft
  int n_tokens;         // per prompt
};

class AutoGreedy : public ::testing::TestWithParam<AutoCase> {};

void start_on_arm(Session& session, const std::string& name);  // below

TEST_P(AutoGreedy, EqualsPlainDecodingAndTriesEveryPolicy) {
  SF_SKIP_WITHOUT_SHARED();
  const AutoCase& c = GetParam();
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  auto spec = make_session(SpecConfig::Method::kAuto, c.with_draft, c.budget, c.io_bandwidth);
  ASSERT_TRUE(plain && spec);
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t proposed = 0, accepted = 0, cycles = 0;
  std::map<std::string, int> policy_cycles;
  const int n_tokens = c.n_tokens;
  for (const auto& text : kPrompts) {
    const auto prompt = *plain->tokenize(text);
    GenerationStats st;
    const auto want = generate(*plain, prompt, n_tokens, greedy, nullptr);
    const auto got = generate(*spec, prompt, n_tokens, greedy, &st);
    ASSERT_EQ(want, got) << "prompt: " << text;
    proposed += st.spec.draft_tokens;
    accepted += st.spec.accepted_draft_tokens;
    cycles += st.spec.cycles;
    for (const CycleStats& cs : st.cycles) ++policy_cycles[cs.policy];
  }
  std::string used;
  for (const auto& [name, n] : policy_cycles) used += " " + name + "=" + std::to_string(n);
  std::printf("%s: proposed %llu accepted %llu over %llu cycles; policies:%s\n", c.name,
              static_cast<unsigned long long>(proposed), static_cast<unsigned long long>(accepted),
              static_cast<unsigned long long>(cycles), used.c_str());
  // The arms: plain, LEVER, EdgeLLM and chains with a draft model, and retrieval trees beside
  // it; plain and retrieval trees without.
  const std::set<std::string> expected =
      c.with_draft ? std::set<std::string>{"plain", "lever", "edgellm", "chain:2", "chain:4", "chain:8", "coordgen"}
                   : std::set<std::string>{"plain", "coordgen:16", "coordgen:4"};
  for (const auto& [name, n] : policy_cycles) EXPECT_TRUE(expected.count(name)) << "unknown policy " << name;
  EXPECT_TRUE(policy_cycles.count("plain")) << "plain decoding is always tried";
  EXPECT_GE(policy_cycles.size(), 2u) << "a drafting policy is tried";
  EXPECT_GT(proposed, 0u) << "drafts are proposed";
  if (c.drafting_pays || !c.with_draft) {
    EXPECT_GT(accepted, 0u) << "and accepted";
  } else {
    // Where plain decoding wins, the draft model's arms run little more than their trials:
    // resident, 0-3 accepted tokens in a whole run, and none in one suite run on each of
    // 2026-11-28 (48 tokens a prompt) and 2026-12-05 (160). So that acceptance is
    // asserted on something that cannot be luck, auto also runs started on its chain:8 arm
    // (a profile in which that arm is far ahead): it drafts every cycle, its drafts must be
    // accepted, and the output must still be plain decoding's.
    auto drafting = make_session(SpecConfig::Method::kAuto, true, c.budget, c.io_bandwidth);
    ASSERT_TRUE(drafting);
    start_on_arm(*drafting, "chain:8");
    uint64_t drafting_accepted = 0;
    for (const auto& text : kPrompts) {
      const auto prompt = *plain->tokenize(text);
      GenerationStats st;
      const auto want = generate(*plain, prompt, 24, greedy, nullptr);
      ASSERT_EQ(want, generate(*drafting, prompt, 24, greedy, &st)) << "started on chain:8, prompt: " << text;
      drafting_accepted += st.spec.accepted_draft_tokens;
    }
    EXPECT_GT(drafting_accepted, 0u) << "auto's chain:8 arm: drafts accepted";
  }
  if (c.drafting_pays) {
    EXPECT_LT(policy_cycles["plain"], static_cast<int>(cycles / 4)) << "drafting pays here: auto mostly drafts";
    // A chain shorter than one that ran is measured from that chain's cycles (inferred
    // cycles, AutoTreeBuilder::observe_shorter_chains) and needs no trial of its own.
    std::set<std::string> measured;
    for (const auto& [name, n] : policy_cycles) measured.insert(name);
    if (measured.count("chain:8")) measured.insert("chain:4");
    if (measured.count("chain:4")) measured.insert("chain:2");
    EXPECT_EQ(measured, expected) << "every arm is tried or measured when exploration is cheap";
    EXPECT_GT(static_cast<double>(accepted + cycles) / static_cast<double>(cycles), 2.0)
        << "more than two tokens per target pass";
  }
}

// Tokens per prompt. Where drafting pays, every arm must get its trial: exploration may cost
// 3% of the time spent, and trying plain decoding, chain:4 and chain:2 there costs about two
// passes' worth of regret, which 48 tokens a prompt (~50 cycles) only just affords (the last
// arm tried, chain:8, was left out in about one run in eight); 96 leave it room. Resident,
// a pass is so cheap that the drafting arms fall far behind plain decoding after their first
// trial and get 1% of the time: with 48 tokens a prompt that was 2-6 drafting cycles in 288,
// 0-3 tokens accepted (none in one run of the whole suite, 2026-11-28); 160 give them ~3x
// the time, and still none were accepted in one CI run (2026-12-05), so where drafting does
// not pay, acceptance is asserted on a second run started on the chain:8 arm (the test's
// else branch).
INSTANTIATE_TEST_SUITE_P(Budgets, AutoGreedy,
                         ::testing::Values(AutoCase{"draft_resident", true, "100%", 0, false, 160},
                                           AutoCase{"draft_streamed0_emulated_25M", true, "0%", 25e6, true, 96},
                                           AutoCase{"draft_streamed50_emulated_100M", true, "50%", 100e6, false, 48},
                                           AutoCase{"retrieval_streamed0_emulated_25M", false, "0%", 25e6, false, 48}),
                         [](const auto& info) { return std::string(info.param.name); });

// Starts auto from a profile in which arm `name` is far ahead of the others (what a
// session that found it best leaves), so that it runs most cycles on that arm.
void start_on_arm(Session& session, const std::string& name) {
  auto* autob = dynamic_cast<AutoTreeBuilder*>(session.tree_builder());
  ASSERT_NE(autob, nullptr);
  AutoProfile profile;
  bool found = false;
  for (const AutoArm& arm : autob->arms()) {
    ArmEvidence e;
    found |= arm.name == name;
    for (int i = 0; i < 5; ++i) e.add(1.0, 4.0, arm.name == name ? 4e-4 : 4.0);  // 10,000 tokens/s against 1
    profile.arms.emplace_back(arm.name, e);
  }
  ASSERT_TRUE(found) << "auto has no arm " << name;
  autob->start_from(profile);
}

// Auto's EdgeLLM arm drafts during the target's I/O waits (provisional generation) where
// its switch lends, like `--spec edgellm`: provisional tokens are drafted, some are kept, the
// cycles they start are the EdgeLLM arm's, and the output is plain decoding's. Auto starts
// on that arm so that it runs enough cycles to lend in.
void start_on_edgellm_arm(Session& session) { start_on_arm(session, "edgellm"); }

TEST(AutoProvisional, TheEdgeLlmArmDraftsDuringTheTargetsIoAndKeepsSome) {
  SF_SKIP_WITHOUT_SHARED();
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  auto spec = make_session(SpecConfig::Method::kAuto, true, "0%", 100e6, "", /*lend_only_exposed=*/false);
  ASSERT_TRUE(plain && spec);
  start_on_edgellm_arm(*spec);
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t provisional = 0, kept = 0, lent_cycles = 0;
  int edgellm_cycles = 0, cycles = 0, carried_cycles = 0;
  for (const auto& text : kPrompts) {
    const auto prompt = *plain->tokenize(text);
    GenerationStats st;
    const auto want = generate(*plain, prompt, 48, greedy, nullptr);
    ASSERT_EQ(generate(*spec, prompt, 48, greedy, &st), want) << "prompt: " << text;
    provisional += st.spec.provisional_tokens;
    kept += st.spec.provisional_kept;
    lent_cycles += st.spec.provisional_cycles;
    for (const CycleStats& cs : st.cycles) {
      ++cycles;
      edgellm_cycles += cs.policy == "edgellm" ? 1 : 0;
      if (cs.carried_nodes > 0) {
        ++carried_cycles;
        EXPECT_EQ(cs.policy, "edgellm") << "carried drafts go back to the arm that lent";
      }
    }
  }
  std::printf("edgellm arm %d of %d cycles; lent in %llu; provisional %llu kept %llu; %d cycles began carried\n",
              edgellm_cycles, cycles, static_cast<unsigned long long>(lent_cycles),
              static_cast<unsigned long long>(provisional), static_cast<unsigned long long>(kept), carried_cycles);
  EXPECT_GT(edgellm_cycles, cycles / 2) << "auto started on the EdgeLLM arm";
  EXPECT_GT(lent_cycles, 0u) << "the arm lent the target's I/O waits";
  EXPECT_GT(provisional, 0u) << "provisional tokens drafted during the target's I/O waits";
  EXPECT_GT(kept, 0u) << "and some kept";
  EXPECT_GT(carried_cycles, 0) << "kept tokens start the next tree";
}

// Sampling from `spec`, started on an arm that carries drafts into its next cycle:
// 1,500 generations of ten tokens (a six-token generation often ends in the cycle whose
// drafts would be carried). The first token must follow the target's distribution and the
// tenth plain sampling's, drafts must be proposed and some rejected, and some cycles must
// begin from carried `carried_what`. `each` gathers the test's own counters, `report`
// prints them after the shared ones.
void expect_lossless_sampling_with_carries(Session& spec, Session& plain, uint64_t spec_seed, uint64_t plain_seed,
                                           const char* name, const char* carried_what,
                                           const std::function<void(const GenerationStats&)>& each,
                                           const std::function<std::string()>& report) {
  SamplingParams sp;
  sp.temperature = 0.9f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  const auto prompt = *plain.tokenize("Once upon a time, there was a");
  const auto p1 = target_distribution(plain, prompt, sp);
  constexpr int kLength = 10;
  uint64_t accepted = 0, proposed = 0;
  int carried_cycles = 0;
  const test::SampledCounts n = test::sample_first_and_last(spec, plain, prompt, sp, 1500, kLength, spec_seed,
                                                            plain_seed, [&](const GenerationStats& st) {
                                                              accepted += st.spec.accepted_draft_tokens;
                                                              proposed += st.spec.draft_tokens;
                                                              for (const CycleStats& cs : st.cycles)
                                                                carried_cycles += cs.carried_nodes > 0 ? 1 : 0;
                                                              each(st);
                                                            });
  const double p_first = test::chi_square_p_value(n.first_spec, p1);
  const double p_last = test::two_sample_p_value(n.last_spec, n.last_plain);
  std::printf(
      "%s, sampled: first p=%.3f, token %d vs plain p=%.3f; accepted %llu of %llu, %s, %d cycles began carried\n", name,
      p_first, kLength, p_last, static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(proposed),
      report().c_str(), carried_cycles);
  EXPECT_GT(p_first, 1e-3) << "first-token distribution differs from the target's";
  EXPECT_GT(p_last, 1e-3) << "a later token's distribution differs from plain sampling";
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, proposed);
  EXPECT_GT(carried_cycles, 0) << carried_what
                               << " must have been carried, or the carry path is untested under sampling";
}

// Sampling with auto's EdgeLLM arm lending: the first token follows the target's
// distribution, and the tenth (after cycles that carried provisional tokens) has the same
// distribution as plain sampling's.
TEST(AutoProvisional, SamplingStaysLosslessWithDraftsCarried) {
  SF_SKIP_WITHOUT_SHARED();
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  auto spec = make_session(SpecConfig::Method::kAuto, true, "0%", 400e6, "", /*lend_only_exposed=*/false);
  ASSERT_TRUE(plain && spec);
  start_on_edgellm_arm(*spec);
  uint64_t kept = 0;
  expect_lossless_sampling_with_carries(
      *spec, *plain, 7000, 800000, "auto lending", "drafts",
      [&](const GenerationStats& st) { kept += st.spec.provisional_kept; },
      [&] { return "kept " + std::to_string(kept); });
}

// Auto has a mirror arm only where the split leaves the target at least 3 threads: on 2
// the arm cost auto 3-5% (auto_has_mirror_arm). The tests of the arm below ask for 4 threads
// (on this 2-core machine, oversubscribed: they test the mechanism, not its speed).
constexpr int kThreadsForMirrorArm = 4;

bool has_arm(Session& session, const std::string& name) {
  auto* autob = dynamic_cast<AutoTreeBuilder*>(session.tree_builder());
  if (!autob) return false;
  for (const AutoArm& arm : autob->arms())
    if (arm.name == name) return true;
  return false;
}

// Auto's LEVER arm has its trees pruned at the early exit only where the layers after the
// exit are resident: a streamed layer's pass waits on its reads whatever the rows, so there
// a dropped row saves nothing and costs the tokens it would have been accepted with. At 0%
// (EMULATED 25 MB/s, LEVER's trees of up to 64 nodes) auto runs the arm unpruned while
// `--spec lever` prunes; with everything resident auto prunes.
TEST(AutoPruning, TheLeverArmIsPrunedOnlyWhereTheLaterLayersAreResident) {
  SF_SKIP_WITHOUT_SHARED();
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  auto streamed = make_session(SpecConfig::Method::kAuto, true, "0%", 25e6);
  auto half = make_session(SpecConfig::Method::kAuto, true, "50%", 25e6);
  auto resident = make_session(SpecConfig::Method::kAuto, true, "100%", 0);
  SessionOptions lo;
  lo.model_path = test::shared_path("models/stories260K.gguf");
  lo.n_threads = 2;
  lo.n_ctx = 256;
  lo.mem_budget = *MemoryBudget::parse("0%");
  lo.io_bandwidth = 25e6;
  lo.spec.method = SpecConfig::Method::kLever;
  lo.spec.prune.enabled = true;  // as `--spec lever` sets it
  lo.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
  auto made = Session::create(lo);
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto lever = std::move(*made);
  ASSERT_TRUE(plain && streamed && half && resident && lever);
  EXPECT_FALSE(streamed->auto_prunes());
  EXPECT_FALSE(half->auto_prunes()) << "2 of 5 layers pinned, the exit after layer 2";
  EXPECT_TRUE(resident->auto_prunes());
  start_on_arm(*streamed, "lever");
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t auto_pruned = 0, lever_pruned = 0, lever_cycles = 0;
  for (const std::string text : {"Once upon a time", "The little dog was sad because"}) {
    const auto prompt = *plain->tokenize(text);
    const auto want = generate(*plain, prompt, 40, greedy, nullptr);
    GenerationStats a, l;
    ASSERT_EQ(generate(*streamed, prompt, 40, greedy, &a), want) << text;
    ASSERT_EQ(generate(*lever, prompt, 40, greedy, &l), want) << text;
    auto_pruned += a.spec.rows_pruned;
    lever_pruned += l.spec.rows_pruned;
    for (const CycleStats& cs : a.cycles) lever_cycles += cs.policy == "lever";
  }
  EXPECT_GT(lever_cycles, 5u) << "auto ran its LEVER arm";
  EXPECT_EQ(auto_pruned, 0u);
  EXPECT_GT(lever_pruned, 0u) << "the same trees pruned by --spec lever";
}

TEST(AutoMirror, TheArmIsOfferedOnlyWhereTheTargetKeepsThreeThreads) {
  SF_SKIP_WITHOUT_SHARED();
  EXPECT_FALSE(auto_has_mirror_arm(2, 0));
  EXPECT_FALSE(auto_has_mirror_arm(3, 0));
  EXPECT_TRUE(auto_has_mirror_arm(4, 0));
  EXPECT_FALSE(auto_has_mirror_arm(4, 2));
  auto two = make_session(SpecConfig::Method::kAuto, true, "0%", 100e6, "", true, 2);
  auto four = make_session(SpecConfig::Method::kAuto, true, "0%", 100e6, "", true, kThreadsForMirrorArm);
  ASSERT_TRUE(two && four);
  EXPECT_FALSE(has_arm(*two, "mirror"));
  EXPECT_EQ(two->mirror(), nullptr) << "no rollouts, threads or pools for them";
  EXPECT_TRUE(has_arm(*four, "mirror"));
  EXPECT_NE(four->mirror(), nullptr);
}

// Auto's mirror arm: Mirror-SD's rollouts of the next window are drafted on the draft's
// own thread beside the target's later layers (the target's pool narrowed for those passes
// only), a reused rollout starts the next window, whose cycle is the mirror arm's, and the
// output is plain decoding's. Streamed at 0% (EMULATED 100 MB/s), so the later layers leave
// the rollouts time.
TEST(AutoMirror, TheMirrorArmDraftsRolloutsBesideTheTargetAndReusesSome) {
  SF_SKIP_WITHOUT_SHARED();
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  auto spec = make_session(SpecConfig::Method::kAuto, true, "0%", 100e6, "", true, kThreadsForMirrorArm);
  ASSERT_TRUE(plain && spec);
  ASSERT_NE(spec->mirror(), nullptr) << "auto beside a draft model can run Mirror-SD's rollouts";
  start_on_arm(*spec, "mirror");
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t launched = 0, reused = 0, rollout_tokens = 0, kept = 0;
  int mirror_cycles = 0, cycles = 0, carried_cycles = 0;
  for (const auto& text : kPrompts) {
    const auto prompt = *plain->tokenize(text);
    GenerationStats st;
    const auto want = generate(*plain, prompt, 48, greedy, nullptr);
    ASSERT_EQ(generate(*spec, prompt, 48, greedy, &st), want) << "prompt: " << text;
    launched += st.spec.mirror_cycles;
    reused += st.spec.mirror_reused;
    rollout_tokens += st.spec.rollout_tokens;
    kept += st.spec.rollout_kept;
    for (const CycleStats& cs : st.cycles) {
      ++cycles;
      mirror_cycles += cs.policy == "mirror" ? 1 : 0;
      if (cs.carried_nodes > 0) {
        ++carried_cycles;
        EXPECT_EQ(cs.policy, "mirror") << "a reused rollout goes back to the mirror arm";
      }
      if (cs.mirror_outcome != 0) {
        EXPECT_EQ(cs.policy, "mirror") << "only the mirror arm launches rollouts";
      }
    }
  }
  std::printf(
      "mirror arm %d of %d cycles; launched rollouts in %llu, reused %llu; %llu rollout tokens, %llu kept; "
      "%d cycles began carried\n",
      mirror_cycles, cycles, static_cast<unsigned long long>(launched), static_cast<unsigned long long>(reused),
      static_cast<unsigned long long>(rollout_tokens), static_cast<unsigned long long>(kept), carried_cycles);
  EXPECT_GT(mirror_cycles, cycles / 2) << "auto started on the mirror arm";
  EXPECT_GT(launched, 0u) << "the mirror arm's passes launched rollouts";
  EXPECT_GT(rollout_tokens, 0u) << "rollout tokens drafted beside the target";
  EXPECT_GT(reused, 0u) << "and some rollouts reused";
  EXPECT_GT(kept, 0u);
  EXPECT_GT(carried_cycles, 0) << "a reused rollout starts the next window";
}

// Sampling with auto's mirror arm: the first token follows the target's distribution, and
// the tenth (after windows started from reused rollouts) has plain sampling's.
TEST(AutoMirror, SamplingStaysLosslessWithRolloutsCarried) {
  SF_SKIP_WITHOUT_SHARED();
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  auto spec = make_session(SpecConfig::Method::kAuto, true, "0%", 400e6, "", true, kThreadsForMirrorArm);
  ASSERT_TRUE(plain && spec);
  start_on_arm(*spec, "mirror");
  uint64_t reused = 0;
  expect_lossless_sampling_with_carries(
      *spec, *plain, 11000, 900000, "auto mirror arm", "rollouts",
      [&](const GenerationStats& st) { reused += st.spec.mirror_reused; },
      [&] { return std::to_string(reused) + " rollouts reused"; });
}

TEST(AutoSampled, FirstAndSecondTokenDistributionsMatchTarget) {
  SF_SKIP_WITHOUT_SHARED();
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  // Streamed with EMULATED slow storage, so auto drafts (and LEVER's arm prunes).
  auto spec = make_session(SpecConfig::Method::kAuto, true, "0%", 200e6);
  ASSERT_TRUE(plain && spec);
  SamplingParams sp;
  sp.temperature = 1.5f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  const auto prompt = *plain->tokenize("Once upon a time, there was a");
  const auto p1 = target_distribution(*plain, prompt, sp);
  const int trials = 1500;
  std::vector<double> first(p1.size(), 0.0);
  std::map<int32_t, std::vector<double>> second;
  uint64_t accepted = 0, proposed = 0;
  for (int i = 0; i < trials; ++i) {
    sp.seed = 9000 + i;
    GenerationStats st;
    const auto out = generate(*spec, prompt, 2, sp, &st);
    ASSERT_EQ(out.size(), 2u);
    accepted += st.spec.accepted_draft_tokens;
    proposed += st.spec.draft_tokens;
    first[out[0]] += 1;
    auto& row = second[out[0]];
    row.resize(p1.size());
    row[out[1]] += 1;
  }
  int32_t top = 0;
  for (size_t t = 0; t < first.size(); ++t)
    if (first[t] > first[top]) top = static_cast<int32_t>(t);
  std::vector<int32_t> prefix = prompt;
  prefix.push_back(top);
  const auto p2 = target_distribution(*plain, prefix, sp);
  const double p_first = test::chi_square_p_value(first, p1);
  const double p_second = test::chi_square_p_value(second[top], p2);
  std::printf("auto sampled: first p=%.3f second p=%.3f (n=%.0f), accepted %llu of %llu\n", p_first, p_second,
              first[top], static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(proposed));
  EXPECT_GT(p_first, 1e-3) << "first-token distribution differs from the target's";
  EXPECT_GT(p_second, 1e-3) << "second-token distribution differs from the target's";
  EXPECT_GT(accepted, 0u) << "drafts must be accepted";
  EXPECT_LT(accepted, proposed) << "and sometimes rejected, or the residual path is untested";
}

// The session tells its builder of each new prompt: auto's retrieval calibration starts its
// reliability afresh (whether a text repeats itself is the text's own), the draft model's
// calibration keeps what it learnt.
TEST(AutoModel, EachPromptRestartsOnlyRetrievalsReliability) {
  SF_SKIP_WITHOUT_SHARED();
  auto spec = make_session(SpecConfig::Method::kAuto, true, "0%", 200e6);
  ASSERT_TRUE(spec);
  SamplingParams greedy;
  greedy.temperature = 0;
  GenerationStats st;
  generate(*spec, *spec->tokenize(kPrompts[0]), 8, greedy, &st);
  auto* autob = dynamic_cast<AutoTreeBuilder*>(spec->tree_builder());
  ASSERT_NE(autob, nullptr);
  AcceptanceCalibration* retrieval = nullptr;
  AcceptanceCalibration* model = nullptr;
  for (const AutoArm& arm : autob->arms()) {
    if (arm.source == ArmSource::kRetrieval && !retrieval) retrieval = arm.builder->acceptance_calibration();
    if (arm.source == ArmSource::kModel && !model) model = arm.builder->acceptance_calibration();
  }
  ASSERT_TRUE(retrieval && model);
  // Both learn that the target's token is never among their candidates.
  TokenTree miss;
  miss.add(5, TokenTree::kRoot, 0.6f);
  miss.candidates(TokenTree::kRoot) = {{5, 0.6f}, {7, 0.3f}};
  for (int i = 0; i < 40; ++i) {
    retrieval->observe(miss, {{TokenTree::kRoot, 9}});
    model->observe(miss, {{TokenTree::kRoot, 9}});
  }
  ASSERT_LT(retrieval->reliability(), 0.2);
  ASSERT_LT(model->reliability(), 0.2);
  // A new prompt, prefilled and no token asked for: no cycle runs, so nothing but the
  // restart moves either calibration.
  const double model_learnt = model->reliability();
  generate(*spec, *spec->tokenize(kPrompts[1]), 0, greedy, &st);
  EXPECT_EQ(st.spec.cycles, 0);
  EXPECT_EQ(retrieval->reliability(), AcceptanceCalibration().reliability())
      << "the new prompt restarted retrieval's reliability from its prior";
  EXPECT_EQ(model->reliability(), model_learnt) << "the draft model's was kept";
}

TEST(AutoProfileModel, ASecondSessionStartsWhereTheFirstLeftOff) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = test::per_test_scratch_dir() + "/auto";
  auto plain = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  ASSERT_TRUE(plain);
  SamplingParams greedy;
  greedy.temperature = 0;
  // EMULATED 25 MB/s at 0%: a pass costs tens of draft steps, so a drafting arm is best.
  const auto run = [&](Session& s, const std::string& text, GenerationStats* st) {
    const auto prompt = *plain->tokenize(text);
    const auto got = generate(s, prompt, 48, greedy, st);
    EXPECT_EQ(got, generate(*plain, prompt, 48, greedy, nullptr)) << "lossless: " << text;
  };
  std::string path;
  {
    auto first = make_session(SpecConfig::Method::kAuto, true, "0%", 25e6, dir);
    ASSERT_TRUE(first);
    path = first->auto_profile_path();
    ASSERT_FALSE(path.empty());
    EXPECT_FALSE(std::filesystem::exists(path)) << "nothing kept before the first generation";
    for (int i = 0; i < 3; ++i) {
      GenerationStats st;
      run(*first, kPrompts[static_cast<size_t>(i)], &st);
      ASSERT_FALSE(st.cycles.empty());
      if (i == 0) {
        EXPECT_EQ(st.cycles[0].policy, "plain") << "a fresh session tries plain decoding first";
      }
    }
  }
  auto kept = AutoProfile::load(path);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->generations, 3);
  std::string best;
  double best_rate = 0;
  for (const auto& [name, e] : kept->arms)
    if (e.tokens / e.seconds > best_rate) best_rate = e.tokens / e.seconds, best = name;
  ASSERT_NE(best, "plain") << "drafting pays at 25 MB/s";

  auto second = make_session(SpecConfig::Method::kAuto, true, "0%", 25e6, dir);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->auto_profile_path(), path) << "the same setting, the same file";
  GenerationStats st;
  run(*second, kPrompts[3], &st);
  ASSERT_FALSE(st.cycles.empty());
  EXPECT_EQ(st.cycles[0].policy, best) << "starts on the arm the first session found best";
  EXPECT_GT(st.spec.accepted_draft_tokens, 0u);
  EXPECT_EQ(AutoProfile::load(path)->generations, 4);

  // Another budget is another setting: its own file.
  auto other = make_session(SpecConfig::Method::kAuto, true, "50%", 25e6, dir);
  ASSERT_TRUE(other);
  EXPECT_NE(other->auto_profile_path(), path);

  // A damaged file: a fresh start (plain first), and the file is rewritten whole.
  std::ofstream(path) << "{\"format\": \"specflash-auto-pro";
  auto third = make_session(SpecConfig::Method::kAuto, true, "0%", 25e6, dir);
  ASSERT_TRUE(third) << "a damaged profile never stops a run";
  run(*third, kPrompts[4], &st);
  EXPECT_EQ(st.cycles[0].policy, "plain");
  auto rewritten = AutoProfile::load(path);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().message();
  EXPECT_EQ(rewritten->generations, 1);
}

// What auto charges for leaving plain decoding: the draft model counts the committed tokens
// it has not run (pending_tokens) and, when its next root draft runs them, the catch-up's
// tokens and seconds (DraftCounters).
TEST(DraftCatchUp, TokensCommittedWithoutDraftingAreRunByTheNextRootDraft) {
  SF_SKIP_WITHOUT_SHARED();
  auto target = make_session(SpecConfig::Method::kNone, false, "100%", 0);
  ASSERT_TRUE(target);
  ThreadPool pool(2);
  auto drafter = DraftModelDrafter::create(test::source_path("models/stories260K-draft.gguf"), target->tokenizer(),
                                           target->model().hparams().n_vocab, pool, 128);
  ASSERT_TRUE(drafter.ok()) << drafter.status().message();
  DraftModelDrafter& d = **drafter;
  SamplingParams greedy;
  greedy.temperature = 0;
  const Sampler sampler(greedy);
  std::vector<int32_t> history = *target->tokenize("Lily wanted to play with her big red ball. One day");
  d.reset(history);
  EXPECT_EQ(d.pending_tokens(), history.size()) << "a new prompt is all pending";
  // A drafting cycle: the root draft runs the prompt.
  ASSERT_TRUE(d.begin_cycle(history, greedy, sampler).ok());
  TokenTree tree;
  std::vector<NodeDistribution> out;
  ASSERT_TRUE(d.draft(tree, {TokenTree::kRoot}, &out).ok());
  EXPECT_EQ(d.draft_counters().catch_up_tokens, history.size());
  EXPECT_GT(d.draft_counters().catch_up_seconds, 0.0);
  EXPECT_EQ(d.pending_tokens(), 0u);
  d.commit(tree, {}, out[0].probs[0].id);  // the target rejected everything: its bonus token
  history.push_back(out[0].probs[0].id);
  // Five cycles of plain decoding: nothing is drafted, every token stays pending.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(d.begin_cycle(history, greedy, sampler).ok());
    const TokenTree empty;
    d.commit(empty, {}, 7 + i);
    history.push_back(7 + i);
  }
  EXPECT_EQ(d.pending_tokens(), 6u) << "the first bonus token and five plain tokens";
  const double seconds_before = d.draft_counters().catch_up_seconds;
  ASSERT_TRUE(d.begin_cycle(history, greedy, sampler).ok());
  ASSERT_TRUE(d.draft(TokenTree(), {TokenTree::kRoot}, &out).ok());
  EXPECT_EQ(d.draft_counters().catch_up_tokens, history.size()) << "every committed token was run once";
  EXPECT_GT(d.draft_counters().catch_up_seconds, seconds_before);
  EXPECT_EQ(d.pending_tokens(), 0u);
}

}  // namespace
}  // namespace sf
