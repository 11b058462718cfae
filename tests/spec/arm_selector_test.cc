// ArmSelector (auto's online choice) against simulated arms of known, fixed rates:
//  - it settles on the fastest arm, whichever index that is;
//  - the time lost to exploration stays near its share of the run, even when one arm is
//    25x slower than the best (a long chain with a resident target);
//  - an arm that is slow is tried rarely, a near-equal one is re-measured often;
//  - when the regime changes (the best arm gets slow), it moves to the new best;
//  - evidence carried from one session to the next (auto's profile) starts it on the best
//    arm and, over sessions, tells near arms apart that one session cannot.
#include "spec/arm_selector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sf {
namespace {

struct SimArm {
  double tokens;   // per cycle
  double seconds;  // per cycle
};

// Runs `cycles` cycles; returns the cycles each arm ran and the run's total seconds.
std::vector<int64_t> simulate(ArmSelector& sel, const std::vector<SimArm>& arms, int cycles, double* seconds,
                              double* tokens) {
  std::vector<int64_t> runs(arms.size(), 0);
  for (int i = 0; i < cycles; ++i) {
    const int a = sel.choose();
    ++runs[static_cast<size_t>(a)];
    sel.observe(a, arms[static_cast<size_t>(a)].tokens, arms[static_cast<size_t>(a)].seconds);
    if (seconds) *seconds += arms[static_cast<size_t>(a)].seconds;
    if (tokens) *tokens += arms[static_cast<size_t>(a)].tokens;
  }
  return runs;
}

TEST(ArmSelector, SettlesOnTheFastestArm) {
  // plain, lever-like, chain-like; the middle one is best (6 tokens per 1.2 passes).
  const std::vector<SimArm> arms = {{1, 1.0}, {6, 1.2}, {4, 1.1}};
  ArmSelector sel(3);
  double seconds = 0, tokens = 0;
  const auto runs = simulate(sel, arms, 2000, &seconds, &tokens);
  EXPECT_EQ(sel.best(), 1);
  EXPECT_GT(runs[1], 1800) << "most cycles on the best arm";
  EXPECT_GE(runs[0], 1);
  EXPECT_GE(runs[2], 1);
  // Within 5% of always running the best arm.
  EXPECT_GT(tokens / seconds, 0.95 * 6 / 1.2);
}

TEST(ArmSelector, ExplorationOfAVerySlowArmCostsLittle) {
  // A resident target: plain decoding is best; a chain costs 25x more per token.
  const std::vector<SimArm> arms = {{1, 1.0}, {4, 100.0}, {1.1, 1.3}};
  ArmSelectorOptions options;
  options.explore_share = 0.03;
  ArmSelector sel(3, options);
  double seconds = 0, tokens = 0;
  const auto runs = simulate(sel, arms, 20000, &seconds, &tokens);
  EXPECT_EQ(sel.best(), 0);
  EXPECT_LE(runs[1], 10) << "the slow arm is tried only when the regret budget allows";
  EXPECT_GE(runs[1], 1) << "but it is tried";
  EXPECT_GT(runs[2], runs[1]) << "the nearly-as-good arm is re-measured more often";
  // The loss: at most the exploration share plus one slow cycle's worth early on.
  const double ideal = tokens / 1.0;  // seconds the best arm would have needed
  EXPECT_LT(seconds, ideal * 1.03 + 100.0);
  EXPECT_LE(sel.regret_seconds(), options.explore_share * sel.total_seconds() + 100.0);
}

TEST(ArmSelector, FollowsARegimeChange) {
  std::vector<SimArm> arms = {{1, 1.0}, {5, 1.0}};
  ArmSelector sel(2);
  simulate(sel, arms, 500, nullptr, nullptr);
  ASSERT_EQ(sel.best(), 1);
  arms[1] = {5, 20.0};  // drafting stopped paying (say, the budget now pins everything)
  const auto runs = simulate(sel, arms, 2000, nullptr, nullptr);
  EXPECT_EQ(sel.best(), 0);
  EXPECT_GT(runs[0], 1900);
}

// Cycle times on this project's machine are heavy-tailed: a streamed pass's I/O stall is
// 0.2 ms in most cycles, 1-2 ms in some and 10-20 ms now and then, whatever the policy.
// Such a cycle says nothing about the arm that happened to run it; the selector must not
// leave the best arm for a slightly worse one (or plain decoding) because of it.
TEST(ArmSelector, HeavyTailedCycleTimesDoNotPullItOffTheBestArm) {
  // The best arm, one 10% worse, and plain decoding (cheaper cycles, far fewer tokens).
  const std::vector<SimArm> arms = {{4.0, 1.0}, {3.6, 1.0}, {1.0, 0.7}};
  uint64_t rng = 12345;
  const auto uniform = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(rng >> 11) / static_cast<double>(uint64_t{1} << 53);
  };
  // Multiplies a cycle's time: most cycles +0-30%, 15% of them 2-3x, 5% 6-21x.
  const auto noise = [&] {
    const double u = uniform();
    if (u < 0.80) return 1.0 + 0.3 * uniform();
    if (u < 0.95) return 2.0 + uniform();
    return 6.0 + 15.0 * uniform();
  };
  double mean_noise = 0;
  for (int i = 0; i < 200000; ++i) mean_noise += noise() / 200000;
  ArmSelector sel(3);
  double seconds = 0, tokens = 0;
  std::vector<int64_t> runs(arms.size(), 0);
  for (int i = 0; i < 20000; ++i) {
    const int a = sel.choose();
    ++runs[static_cast<size_t>(a)];
    const double s = arms[static_cast<size_t>(a)].seconds * noise();
    sel.observe(a, arms[static_cast<size_t>(a)].tokens, s);
    seconds += s;
    tokens += arms[static_cast<size_t>(a)].tokens;
  }
  const double best_rate = 4.0 / (1.0 * mean_noise);
  EXPECT_GT(runs[0], 20000 * 0.85) << "most cycles on the best arm";
  EXPECT_GT(tokens / seconds, 0.95 * best_rate) << "within 5% of always running the best arm";
}

TEST(ArmSelector, IsDeterministic) {
  const std::vector<SimArm> arms = {{1, 1.0}, {3, 1.5}, {2, 0.9}, {7, 3.0}};
  ArmSelector a(4), b(4);
  EXPECT_EQ(simulate(a, arms, 3000, nullptr, nullptr), simulate(b, arms, 3000, nullptr, nullptr));
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// An arm that is faster than plain decoding in 7 cycles of 8 and pays a big cost of its own
// in the 8th (LEVER's probe tree inside `auto` at a 100% budget: 0.1 ms cycles, then 8 ms of
// drafting) is 5x slower overall. Passed as the arm's own seconds, that cost is not capped
// as an outlier, so the arm is not mistaken for the best and exploring it stays within budget.
TEST(ArmSelector, AnArmsOwnPeriodicCostIsNotCappedAsNoise) {
  ArmSelector sel(2);
  double seconds = 0, tokens = 0;
  int cycles_of_arm1 = 0, own_cycle = 0;
  for (int i = 0; i < 4000; ++i) {
    const int a = sel.choose();
    double s = 0.1e-3, own = 0;
    if (a == 1) {
      ++cycles_of_arm1;
      s = 0.08e-3;  // its cheap cycles are faster than plain's
      if (++own_cycle % 8 == 0) own = 8e-3;
    }
    sel.observe(a, 1.0, s + own, own);
    seconds += s + own;
    tokens += 1;
  }
  EXPECT_EQ(sel.best(), 0);
  EXPECT_LT(cycles_of_arm1, 4000 * 0.05) << "the costly arm is rarely run";
  EXPECT_GT(tokens / seconds, 0.93 / 0.1e-3) << "within 7% of always running plain (3% is exploring's budget)";
  EXPECT_LE(sel.regret_seconds(), 0.031 * sel.total_seconds() + 8.2e-3) << "exploring stays within its budget";
}

// Plain decoding is best; a draft arm is nearly as fast per cycle but, when run, first pays
// for the draft catching up on every token plain decoding emitted since it last ran (a
// resident target: 0.03 ms plain cycles, 0.015 ms of catch-up per token). Re-measuring it
// every `stale_cycles` costs far more than its cycle, and more the longer it waited: told
// that cost up front (entry seconds), the selector stops re-measuring it; not told, it keeps
// paying the catch-ups out of the whole regret budget.
double run_with_catch_up(bool tell_entry_cost, int* draft_cycles) {
  ArmSelector sel(2);
  const double plain = 0.03e-3, draft = 0.031e-3, catch_up = 0.015e-3;
  double seconds = 0;
  int behind = 0;  // tokens the draft has not run
  *draft_cycles = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<double> entry;
    // As auto does: the cost per token is known once a catch-up has been measured.
    if (tell_entry_cost && sel.cycles(1) > 0) entry = {0.0, catch_up * std::max(0.0, behind - sel.tokens_per_cycle(1))};
    const int a = sel.choose(entry);
    double s = plain, own = 0;
    if (a == 1) {
      ++*draft_cycles;
      own = catch_up * behind;
      s = draft;
      behind = 0;
    }
    ++behind;  // the cycle's token, which the draft runs at its next cycle
    sel.observe(a, 1.0, s + own, own);
    seconds += s + own;
  }
  return seconds / (20000 * plain);  // against always running plain decoding
}

TEST(ArmSelector, AnArmsEntryCostStopsCostlyReMeasuring) {
  int told_cycles = 0, untold_cycles = 0;
  const double told = run_with_catch_up(true, &told_cycles);
  const double untold = run_with_catch_up(false, &untold_cycles);
  EXPECT_GE(told_cycles, 1) << "the draft arm is tried";
  EXPECT_LT(told, 1.005) << "and then left alone: within 0.5% of plain decoding";
  EXPECT_GT(untold, told + 0.01) << "without the entry cost, re-measuring costs its budget";
  EXPECT_GT(untold_cycles, told_cycles);
}

// When the best arm drafts too, a catch-up (a new prompt for the draft) is paid whichever
// drafting arm runs next: it must not stop re-measuring a near-equal drafting arm.
TEST(ArmSelector, AnEntryCostTheBestArmPaysTooIsNotChargedToExploring) {
  const std::vector<SimArm> arms = {{1, 1.0}, {4, 1.0}, {3.9, 1.0}};
  ArmSelector sel(3);
  std::vector<int64_t> runs(3, 0);
  for (int i = 0; i < 5000; ++i) {
    const double catch_up = 100.0;  // far more than the whole regret budget
    const int a = sel.choose({0.0, catch_up, catch_up});
    ++runs[static_cast<size_t>(a)];
    sel.observe(a, arms[static_cast<size_t>(a)].tokens, arms[static_cast<size_t>(a)].seconds);
  }
  EXPECT_EQ(sel.best(), 1);
  EXPECT_GT(runs[2], 20) << "the near-equal drafting arm is still re-measured";
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// With a resident target, plain decoding is best and every drafting arm is 2-10x slower
// per token, with noisy cycles. Over a long session, re-measuring those arms (in search of a
// change of regime) may only spend the small far share of the time, not the whole regret
// budget: the old rule lost ~3% against always running plain decoding.
double long_session_share_of_plain(ArmSelectorOptions options) {
  struct Arm {
    double max_tokens, seconds;
  };
  // plain, LEVER, EdgeLLM, chain:4, chain:2, chain:8 (cycle seconds before noise)
  const std::vector<Arm> arms = {{1, 0.03e-3}, {5, 0.25e-3}, {5, 0.3e-3}, {4, 0.15e-3}, {3, 0.1e-3}, {6, 0.35e-3}};
  uint64_t rng = 7;
  const auto uniform = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(rng >> 11) / static_cast<double>(uint64_t{1} << 53);
  };
  ArmSelector sel(static_cast<int>(arms.size()), options);
  double seconds = 0, tokens = 0, noise_sum = 0;
  for (int i = 0; i < 40000; ++i) {
    const int a = sel.choose();
    const Arm& arm = arms[static_cast<size_t>(a)];
    const double t = 1 + std::floor(uniform() * arm.max_tokens);
    const double noise = uniform() < 0.9 ? 1 + 0.3 * uniform() : 2 + 3 * uniform();
    sel.observe(a, t, arm.seconds * noise);
    seconds += arm.seconds * noise;
    tokens += t;
    noise_sum += noise;
  }
  // Against plain decoding at the run's mean noise.
  return tokens / seconds * arms[0].seconds * noise_sum / 40000;
}

TEST(ArmSelector, AnArmFarBehindIsReMeasuredFromASmallerShare) {
  ArmSelectorOptions whole_budget;
  whole_budget.far_explore_share = whole_budget.explore_share;
  const double with_far_share = long_session_share_of_plain({});
  const double without = long_session_share_of_plain(whole_budget);
  EXPECT_GT(with_far_share, 0.975) << "within 2.5% of always running plain decoding (0.981 when written)";
  EXPECT_GT(with_far_share, without + 0.005) << "the far share is what gains (0.981 vs 0.969 when written)";
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// Sessions of 200 cycles over two near arms whose cycles emit anywhere from 1 to ~12 tokens
// (LEVER's trees against EdgeLLM's at EMULATED 25 MB/s, docs/auto.md), and plain decoding.
// Returns the share of cycles on the best arm over sessions 2..n; `carry`: each session
// starts from the lasting evidence of the one before (auto's profile file).
double best_arm_share_over_sessions_with(const ArmSelectorOptions& options, bool carry, int sessions, uint64_t seed) {
  uint64_t rng = seed;
  const auto uniform = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(rng >> 11) / static_cast<double>(uint64_t{1} << 53);
  };
  // Mean tokens per cycle: plain 1, the near arm 5.5, the best 6.4; every cycle ~1 s.
  const double mean_tokens[3] = {1.0, 5.5, 6.4};
  std::vector<ArmEvidence> kept(3);
  int64_t on_best = 0, counted = 0;
  for (int s = 0; s < sessions; ++s) {
    ArmSelector sel(3, options);
    sel.set_max_tokens_per_cycle(0, 1);
    if (carry)
      for (int a = 0; a < 3; ++a) sel.start_from(a, kept[static_cast<size_t>(a)]);
    for (int i = 0; i < 200; ++i) {
      const int a = sel.choose();
      const double m = mean_tokens[a];
      const double tokens = a == 0 ? 1.0 : 1 + uniform() * 2 * (m - 1);
      sel.observe(a, tokens, 0.9 + 0.2 * uniform());
      if (s > 0) {
        on_best += a == 2;
        ++counted;
      }
    }
    for (int a = 0; a < 3; ++a) kept[static_cast<size_t>(a)] = sel.lasting_evidence(a);
  }
  return static_cast<double>(on_best) / static_cast<double>(counted);
}

double best_arm_share_over_sessions(bool carry, int sessions, uint64_t seed) {
  return best_arm_share_over_sessions_with({}, carry, sessions, seed);
}

TEST(ArmSelector, EvidenceCarriedAcrossSessionsTellsNearArmsApart) {
  // Measured over seeds 1..8: fresh 0.71-0.86 (mean 0.79), carried 0.84-0.96 (mean 0.91).
  // (Before thinly measured arms were re-measured at once: fresh 0.52-0.85, carried 0.82-0.97.)
  double fresh = 0, carried = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const double f = best_arm_share_over_sessions(false, 20, seed);
    const double c = best_arm_share_over_sessions(true, 20, seed);
    EXPECT_GT(c, 0.8) << "seed " << seed;
    fresh += f / 8;
    carried += c / 8;
  }
  EXPECT_GT(carried, 0.88);
  EXPECT_GT(carried, fresh + 0.05) << "fresh sessions " << fresh;
}

TEST(ArmSelector, StartsFromEarlierEvidenceOnTheBestArm) {
  // Session 1 measures three arms; the middle one is best.
  const std::vector<SimArm> arms = {{1, 1.0}, {6, 1.2}, {4, 1.1}};
  ArmSelector first(3);
  simulate(first, arms, 500, nullptr, nullptr);
  ASSERT_EQ(first.best(), 1);
  // Session 2 starts from it: its first cycles run the best arm, none is tried for being new.
  ArmSelector second(3);
  for (int a = 0; a < 3; ++a) second.start_from(a, first.lasting_evidence(a));
  EXPECT_EQ(second.best(), 1);
  EXPECT_NEAR(second.rate(1), first.rate(1), 1e-9 * first.rate(1));
  EXPECT_EQ(second.cycles(1), 0) << "cycles() counts this session's own";
  const auto runs = simulate(second, arms, 40, nullptr, nullptr);
  EXPECT_EQ(runs[1], 40);
  // Its recent evidence counts as a steady state's ~20 cycles: the session's own take over.
  EXPECT_LE(second.lasting_evidence(1).weight, 1 / (1 - 0.995) + 1e-9);
}

TEST(ArmSelector, AnArmWithoutEarlierEvidenceIsStillTried) {
  const std::vector<SimArm> arms = {{1, 1.0}, {6, 1.2}, {4, 1.1}};
  ArmSelector first(3);
  simulate(first, arms, 500, nullptr, nullptr);
  ArmSelector second(3);
  second.start_from(0, first.lasting_evidence(0));
  second.start_from(1, first.lasting_evidence(1));
  // Evidence that cannot be (a file edited by hand) is ignored.
  ArmEvidence broken = first.lasting_evidence(2);
  broken.seconds = -1;
  second.start_from(2, broken);
  const auto runs = simulate(second, arms, 200, nullptr, nullptr);
  EXPECT_GE(runs[2], 1) << "arm 2 had no usable evidence: it is tried as new";
  EXPECT_GT(runs[1], 180);
}

// An inferred cycle (a shorter chain's, from a longer chain's cycle) measures the arm:
// it is neither tried as new nor re-measured as thin, and it costs no time, no regret and
// no cycle of its own.
TEST(ArmSelector, AnInferredCycleMeasuresAnArmWithoutRunningIt) {
  ArmSelector tried(2), inferred(2);
  for (ArmSelector* sel : {&tried, &inferred}) sel->observe(0, 4, 1.0);
  inferred.observe_inferred(1, 1, 1.0);
  EXPECT_EQ(tried.choose(), 1) << "without evidence, arm 1 is tried as new";
  EXPECT_EQ(inferred.choose(), 0) << "its inferred rate (1 token/s against 4) is far from worth a cycle";
  EXPECT_DOUBLE_EQ(inferred.rate(1), 1.0);
  EXPECT_EQ(inferred.cycles(1), 0);
  EXPECT_DOUBLE_EQ(inferred.total_seconds(), 1.0);
  EXPECT_DOUBLE_EQ(inferred.regret_seconds(), 0.0);
  // A better inferred rate makes it the best arm, which then runs.
  for (int i = 0; i < 3; ++i) inferred.observe_inferred(1, 12, 1.0);
  EXPECT_EQ(inferred.best(), 1);
  EXPECT_EQ(inferred.choose(), 1);
  // What is carried to a later session includes it.
  EXPECT_GT(inferred.lasting_evidence(1).weight, 3.9);
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// One session of `cycles` cycles over plain decoding (1 token per cycle), a near arm (5.5
// tokens per cycle on average) and the best arm (6.4), cycles of 1 to ~12 tokens in ~1 s,
// whose first `unlucky` cycles emit 1.5 tokens each. Returns the share of cycles on the best.
double best_arm_share_after_unlucky_start(const ArmSelectorOptions& options, int unlucky, int cycles, uint64_t seed,
                                          bool plain_limit) {
  uint64_t rng = seed;
  const auto uniform = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(rng >> 11) / static_cast<double>(uint64_t{1} << 53);
  };
  // A drafting arm's cycle emits 1 token when the first draft token is rejected (the best
  // arm's long trees: 35% of cycles; the near arm's: 20%), else 2 to `top` tokens.
  const double rejected[3] = {1.0, 0.2, 0.35}, top[3] = {1.0, 8.9, 16.6};
  ArmSelector sel(3, options);
  if (plain_limit) sel.set_max_tokens_per_cycle(0, 1);
  int best_runs = 0, on_best = 0;
  for (int i = 0; i < cycles; ++i) {
    const int a = sel.choose();
    double tokens = uniform() < rejected[a] ? 1.0 : 2 + uniform() * (top[a] - 2);
    if (a == 2 && best_runs++ < unlucky) tokens = 1;
    sel.observe(a, tokens, 0.9 + 0.2 * uniform());
    on_best += a == 2;
  }
  return static_cast<double>(on_best) / cycles;
}

TEST(ArmSelector, TwoUnluckyCyclesDoNotBuryTheBestArm) {
  // Before thinly measured arms were re-measured at once (and exploring a better arm earned
  // its regret back), the best arm's share was 0.13 after the unlucky start and 0.64 after a
  // fair one (40 seeds); now 0.63 and 0.75.
  double unlucky = 0, fair = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    unlucky += best_arm_share_after_unlucky_start({}, 2, 200, seed, true) / 40;
    fair += best_arm_share_after_unlucky_start({}, 0, 200, seed, true) / 40;
  }
  EXPECT_GT(unlucky, 0.55);
  EXPECT_GT(fair, 0.7);
}

// A cycle whose time says nothing of its arm's rate (auto: a prompt's first cycle as an
// arm's first trial, which pays the prompt's one-off costs) counts as time, as regret
// against the best arm and as a cycle run, but not as evidence: the arm stays untried.
TEST(ArmSelector, ACycleObservedAsTimeOnlyIsNoEvidence) {
  ArmSelector sel(2);
  sel.observe(0, 1, 30e-6);        // the best arm: 1 token in 30 us
  sel.observe_time(1, 1, 135e-6);  // 1 token in 135 us, one-off costs included
  EXPECT_EQ(sel.cycles(1), 1);
  EXPECT_EQ(sel.rate(1), 0) << "no evidence of its rate";
  EXPECT_EQ(sel.best(), 0);
  EXPECT_NEAR(sel.total_seconds(), 165e-6, 1e-12);
  EXPECT_NEAR(sel.regret_seconds(), 105e-6, 1e-12) << "135 us for what the best arm does in 30";
  // Its trial is paid for: the arm runs next, though that regret is far beyond the budget
  // (3% of 165 us), and only once.
  EXPECT_EQ(sel.choose(), 1);
  EXPECT_EQ(sel.choose(), 0) << "the retry is one choice";
  // A second cycle as time only: the arm still has no evidence, and is retried again.
  sel.observe_time(1, 1, 135e-6);
  EXPECT_EQ(sel.choose(), 1);
  // Measured now: its evidence, not a retry, decides.
  sel.observe(1, 1, 40e-6);
  EXPECT_GT(sel.rate(1), 0);
  sel.observe_time(1, 1, 135e-6);
  EXPECT_EQ(sel.choose(), 0) << "an arm with evidence is not retried";
}

// Plain decoding emits one token per cycle: in the I/O-bound regimes its cycle costs a whole
// streamed pass, as a tree's does, so it cannot catch up however few cycles measured it.
// Told so, the selector re-measures it from the small far share from its first cycle.
TEST(ArmSelector, AnArmThatCannotCatchUpIsFarBehindFromItsFirstCycle) {
  const std::vector<SimArm> arms = {{1, 1.0}, {5, 1.0}, {4, 1.0}};
  int64_t plain_runs[2];
  for (bool limit : {false, true}) {
    ArmSelector sel(3);
    if (limit) sel.set_max_tokens_per_cycle(0, 1);
    plain_runs[limit] = simulate(sel, arms, 400, nullptr, nullptr)[0];
  }
  EXPECT_GE(plain_runs[1], 1) << "still tried, and re-measured now and then";
  EXPECT_LT(plain_runs[1], plain_runs[0]) << "without the limit: " << plain_runs[0];
  std::printf("plain cycles of 400: %lld without the limit, %lld with it\n", static_cast<long long>(plain_runs[0]),
              static_cast<long long>(plain_runs[1]));
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// A resident stories260K target (docs/auto.md): plain decoding emits 1 token in ~26 us; a
// retrieval arm's cycle takes ~110 us and emits 17 tokens when the context repeats (1 cycle
// in 10) and 1 otherwise: 2.6 tokens per cycle, 0.6x plain decoding's rate. Over ~20 recent cycles its rate is within
// noise of anything; its lasting evidence, carried from session to session as auto's profile does, is not. Returns the
// rate of sessions 2..n of 1,024 cycles against always running plain decoding.
double share_of_plain_with_a_lumpy_arm(const ArmSelectorOptions& options, uint64_t seed, int64_t* lumpy_cycles) {
  uint64_t rng = seed;
  const auto uniform = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(rng >> 11) / static_cast<double>(uint64_t{1} << 53);
  };
  std::vector<ArmEvidence> kept(2);
  double seconds = 0, tokens = 0;
  for (int session = 0; session < 16; ++session) {
    ArmSelector sel(2, options);
    sel.set_max_tokens_per_cycle(0, 1);
    sel.set_max_tokens_per_cycle(1, 17);
    for (int a = 0; a < 2; ++a) sel.start_from(a, kept[static_cast<size_t>(a)]);
    for (int i = 0; i < 1024; ++i) {
      const int a = sel.choose();
      const double t = a == 0 ? 1 : (uniform() < 0.1 ? 17 : 1);
      const double s = (a == 0 ? 26e-6 : 110e-6) * (0.9 + 0.2 * uniform());
      sel.observe(a, t, s);
      if (session > 0) {
        seconds += s;
        tokens += t;
        *lumpy_cycles += a;
      }
    }
    for (int a = 0; a < 2; ++a) kept[static_cast<size_t>(a)] = sel.lasting_evidence(a);
  }
  return tokens / seconds * 26e-6;
}

TEST(ArmSelector, LastingEvidenceShowsALumpyArmFarBehind) {
  ArmSelectorOptions recent_only;
  recent_only.far_by_lasting_evidence = false;
  double with_lasting = 0, without = 0;
  int64_t cycles_with = 0, cycles_without = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    with_lasting += share_of_plain_with_a_lumpy_arm({}, seed, &cycles_with) / 8;
    without += share_of_plain_with_a_lumpy_arm(recent_only, seed, &cycles_without) / 8;
  }
  std::printf(
      "rate against plain decoding: %.4f with the lasting evidence (%lld cycles of the lumpy arm), %.4f without "
      "(%lld)\n",
      with_lasting, static_cast<long long>(cycles_with), without, static_cast<long long>(cycles_without));
  // When written: 0.9892 and 828 cycles with it, 0.9846 and 1,263 without (8 seeds).
  EXPECT_LT(cycles_with, cycles_without * 2 / 3);
  EXPECT_GT(with_lasting, without);
}

}  // namespace
}  // namespace sf
