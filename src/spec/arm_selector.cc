#include "spec/arm_selector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "base/check.h"

namespace sf {

namespace {
double evidence_rate(const ArmEvidence& a) { return a.seconds > 0 ? a.tokens / a.seconds : 0; }

// The variance of an arm's cycles around its rate, relative to its mean tokens squared.
double relative_spread(const ArmEvidence& a) {
  if (a.weight <= 0 || a.tokens <= 0) return 0;
  // A ratio estimator's residuals e = tokens - rate * seconds have mean zero.
  const double r = evidence_rate(a);
  const double var = std::max(0.0, (a.tokens_sq - 2 * r * a.tokens_seconds + r * r * a.seconds_sq) / a.weight);
  const double mean_tokens = a.tokens / a.weight;
  return var / (mean_tokens * mean_tokens);
}

// The standard error of the evidence's rate (infinite without evidence).
double rate_error_of(const ArmEvidence& a) {
  if (a.empty() || a.seconds <= 0) return std::numeric_limits<double>::infinity();
  // rate's standard error is sqrt(var(e) / n) / mean(seconds) = rate * sqrt(spread / n);
  // the decayed count of cycles as n understates n, so errs towards "within noise".
  return evidence_rate(a) * std::sqrt(relative_spread(a) / a.weight);
}
}  // namespace

void ArmEvidence::add(double decay, double cycle_tokens, double cycle_seconds) {
  tokens = decay * tokens + cycle_tokens;
  seconds = decay * seconds + cycle_seconds;
  weight = decay * weight + 1;
  tokens_sq = decay * tokens_sq + cycle_tokens * cycle_tokens;
  seconds_sq = decay * seconds_sq + cycle_seconds * cycle_seconds;
  tokens_seconds = decay * tokens_seconds + cycle_tokens * cycle_seconds;
}

ArmEvidence ArmEvidence::at_most(double cycles) const {
  if (weight <= cycles) return *this;
  const double factor = cycles / weight;
  ArmEvidence e = *this;
  for (double* sum : {&e.tokens, &e.seconds, &e.weight, &e.tokens_sq, &e.seconds_sq, &e.tokens_seconds}) *sum *= factor;
  return e;
}

bool ArmEvidence::valid() const {
  for (double sum : {tokens, seconds, weight, tokens_sq, seconds_sq, tokens_seconds})
    if (!std::isfinite(sum) || sum < 0) return false;
  return weight > 0 && seconds > 0;
}

ArmSelector::ArmSelector(int n_arms, ArmSelectorOptions options) : options_(options) {
  SF_CHECK(n_arms >= 1);
  arms_.resize(static_cast<size_t>(n_arms));
}

double ArmSelector::rate(int arm) const { return evidence_rate(arms_[static_cast<size_t>(arm)].recent); }

double ArmSelector::tokens_per_cycle(int arm) const {
  const ArmEvidence& a = arms_[static_cast<size_t>(arm)].recent;
  return a.weight > 0 ? a.tokens / a.weight : 0;
}

double ArmSelector::rate_error(int arm) const { return rate_error_of(arms_[static_cast<size_t>(arm)].recent); }

bool ArmSelector::far_behind(int arm, int top) const {
  // An arm whose cycles can emit at most max_tokens (plain decoding: one) cannot beat the
  // best at its present cost per cycle, however few cycles measured that cost.
  const Arm& a = arms_[static_cast<size_t>(arm)];
  if (!a.recent.empty() && a.max_tokens * a.recent.weight / a.recent.seconds < rate(top)) return true;
  // Beyond noise of the best, by the recent evidence or by the lasting one. An arm whose
  // cycles emit 1 to 17 tokens (a retrieval tree with a resident target) is within noise
  // of anything over its ~20 recent cycles, yet its ~200 lasting ones (this session's and
  // those auto's profile carried over) can show it at half the best rate: re-measuring it
  // every stale_cycles from the whole regret budget cost 3-4% against plain decoding at a
  // 100% budget on stories260K. Its recent rate stays what the choice follows.
  // (A few cycles say little: one unlucky tree of 2 tokens against a typical 6 would bury
  // an arm that is in fact the best.)
  const auto beyond_noise = [&](const ArmEvidence& e) {
    return e.weight >= options_.far_min_cycles &&
           evidence_rate(e) + options_.plausible_z * rate_error_of(e) < rate(top);
  };
  return beyond_noise(a.recent) || (options_.far_by_lasting_evidence && beyond_noise(a.lasting));
}

bool ArmSelector::thinly_measured(int arm) const {
  const ArmEvidence& a = arms_[static_cast<size_t>(arm)].recent;
  return !a.empty() && a.weight < options_.thin_cycles;
}

void ArmSelector::set_max_tokens_per_cycle(int arm, double max_tokens) {
  SF_CHECK(arm >= 0 && arm < n_arms() && max_tokens > 0);
  arms_[static_cast<size_t>(arm)].max_tokens = max_tokens;
}

int ArmSelector::best() const {
  int best = -1;
  for (int a = 0; a < n_arms(); ++a)
    if (!arms_[static_cast<size_t>(a)].recent.empty() && (best < 0 || rate(a) > rate(best))) best = a;
  return best;
}

double ArmSelector::expected_regret(int arm, int top) const {
  const ArmEvidence& a = arms_[static_cast<size_t>(arm)].recent;
  if (a.weight <= 0 || rate(top) <= 0) return 0;
  return std::max(0.0, (a.seconds - a.tokens / rate(top)) / a.weight);
}

int ArmSelector::choose(const std::vector<double>& entry_seconds) {
  SF_CHECK(entry_seconds.empty() || entry_seconds.size() == arms_.size());
  if (const int retry = std::exchange(retry_, -1); retry >= 0 && arms_[static_cast<size_t>(retry)].recent.empty())
    return retry;
  const int top = best();
  if (top < 0) return 0;
  const double budget = options_.explore_share * total_seconds_ - regret_seconds_;
  if (budget < 0) return top;
  // Only what an arm would pay beyond the best arm: when the best arm drafts too, it pays
  // the same catch-up next, so exploring another drafting arm costs nothing extra for it.
  const auto entry = [&](int a) {
    if (entry_seconds.empty()) return 0.0;
    return std::max(0.0, entry_seconds[static_cast<size_t>(a)] - entry_seconds[static_cast<size_t>(top)]);
  };
  const double far_budget = std::min(budget, options_.far_explore_share * total_seconds_ - far_regret_seconds_);
  // An arm never measured, when its entry fits (its cycle's cost is unknown yet).
  for (int a = 0; a < n_arms(); ++a)
    if (arms_[static_cast<size_t>(a)].recent.empty() && entry(a) <= budget) return a;
  // A thinly measured arm (see thin_cycles) not far behind, when its typical cycle fits:
  // the thinnest first.
  int thin = -1;
  for (int a = 0; a < n_arms(); ++a) {
    if (a == top || !thinly_measured(a) || far_behind(a, top) || expected_regret(a, top) + entry(a) > budget) continue;
    if (thin < 0 || arms_[static_cast<size_t>(a)].recent.weight < arms_[static_cast<size_t>(thin)].recent.weight)
      thin = a;
  }
  if (thin >= 0) return thin;
  // The stalest arm among the stale ones whose typical cycle fits in what is left of the
  // budget: a near-equal arm fits nearly always, a very slow one only now and then (and
  // only in the far share, when it is beyond noise of the best).
  int chosen = -1;
  for (int a = 0; a < n_arms(); ++a) {
    const Arm& arm = arms_[static_cast<size_t>(a)];
    if (a == top || arm.recent.empty() || cycle_ - arm.last_cycle <= options_.stale_cycles) continue;
    const double allowed = far_behind(a, top) ? far_budget : budget;
    if (expected_regret(a, top) + entry(a) > allowed) continue;
    if (chosen < 0 || arm.last_cycle < arms_[static_cast<size_t>(chosen)].last_cycle) chosen = a;
  }
  return chosen >= 0 ? chosen : top;
}

void ArmSelector::observe(int arm, double tokens, double seconds, double own_seconds) {
  seconds = std::max(seconds, 1e-9);
  charge(arm, tokens, seconds);
  add_evidence(arm, tokens, seconds, own_seconds);
  arms_[static_cast<size_t>(arm)].last_cycle = cycle_ - 1;
}

void ArmSelector::observe_time(int arm, double tokens, double seconds) {
  charge(arm, tokens, std::max(seconds, 1e-9));
  if (arms_[static_cast<size_t>(arm)].recent.empty()) retry_ = arm;
}

void ArmSelector::charge(int arm, double tokens, double seconds) {
  SF_CHECK(arm >= 0 && arm < n_arms());
  const int top = best();
  if (top >= 0 && top != arm && rate(top) > 0) {
    const double regret = seconds - tokens / rate(top);  // negative: the cycle beat the best
    regret_seconds_ += regret;
    if (far_behind(arm, top)) far_regret_seconds_ += regret;
  }
  total_seconds_ += seconds;
  ++arms_[static_cast<size_t>(arm)].cycles;
  ++cycle_;
}

void ArmSelector::observe_inferred(int arm, double tokens, double seconds, double own_seconds) {
  SF_CHECK(arm >= 0 && arm < n_arms());
  add_evidence(arm, tokens, std::max(seconds, 1e-9), own_seconds);
  mark_measured(arm);
}

void ArmSelector::mark_measured(int arm) {
  SF_CHECK(arm >= 0 && arm < n_arms());
  // Measured as of the last cycle run.
  arms_[static_cast<size_t>(arm)].last_cycle = std::max<int64_t>(0, cycle_ - 1);
}

void ArmSelector::add_evidence(int arm, double tokens, double seconds, double own_seconds) {
  own_seconds = std::clamp(own_seconds, 0.0, seconds);
  Arm& a = arms_[static_cast<size_t>(arm)];
  const ArmEvidence& recent = a.recent;
  // A cycle far slower than the arm's typical one is mostly noise that hits every arm alike
  // (an I/O hiccup, a descheduled thread): count it as `outlier_factor` typical cycles, so
  // one such cycle cannot make the best arm look worse than the next one. A real change of
  // regime still shows within a few cycles, each up to outlier_factor times slower.
  // The cap is for the rate estimate only: the regret budget counts the time the cycle
  // really took (a draft arm's first cycle after a run of plain decoding pays for the draft
  // model catching up on every token since, and capping that hid most of exploring's cost).
  double counted = seconds;
  if (recent.weight >= 1 && options_.outlier_factor > 0)
    counted = own_seconds + std::min(seconds - own_seconds, options_.outlier_factor * recent.seconds / recent.weight);
  a.recent.add(options_.decay, tokens, counted);
  a.lasting.add(options_.lasting_decay, tokens, counted);
}

ArmSelector::Evidence ArmSelector::evidence(int arm) const {
  const Arm& a = arms_.at(static_cast<size_t>(arm));
  return {a.recent, a.lasting};
}

void ArmSelector::restore(int arm, const Evidence& evidence) {
  Arm& a = arms_.at(static_cast<size_t>(arm));
  a.recent = evidence.recent;
  a.lasting = evidence.lasting;
}

void ArmSelector::start_from(int arm, const ArmEvidence& lasting) {
  SF_CHECK(arm >= 0 && arm < n_arms());
  if (!lasting.valid()) return;
  Arm& a = arms_[static_cast<size_t>(arm)];
  a.lasting = lasting;
  const double steady_weight = 1 / (1 - options_.decay);
  a.recent = lasting.at_most(steady_weight);
}

}  // namespace sf
