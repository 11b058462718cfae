#include "spec/acceptance_calibration.h"

#include <algorithm>

namespace sf {
namespace {
// Moving-average weights: a plain mean for the first samples, then recent rows weigh more.
double weight(uint64_t samples, uint64_t mean_until, double ema) {
  return samples <= mean_until ? 1.0 / static_cast<double>(samples) : ema;
}
}  // namespace

AcceptanceCalibration::AcceptanceCalibration(bool renormalise) : renormalise_(renormalise) {
  for (int i = 0; i < kBuckets; ++i) hit_rate_[i] = (i + 0.5) / kBuckets;
}

int AcceptanceCalibration::bucket(double x) { return std::clamp(static_cast<int>(x * kBuckets), 0, kBuckets - 1); }

double candidate_mass(const std::vector<TokenProb>& candidates) {
  double m = 0;
  for (const TokenProb& c : candidates) m += c.p;
  return m;
}

double AcceptanceCalibration::share(double p, double mass) const { return renormalise_ && mass > 0 ? p / mass : p; }

double AcceptanceCalibration::calibrate(double p, double mass) const {
  return std::clamp(r_ * hit_rate_[bucket(share(p, mass))], 0.0, 1.0);
}

void AcceptanceCalibration::begin_text() {
  r_ = kReliabilityPrior;
  r_samples_ = 0;
}

void AcceptanceCalibration::observe(const TokenTree& tree, const std::vector<VisitedRow>& visited) {
  for (const VisitedRow& row : visited) {
    const std::vector<TokenProb>& c = tree.candidates(row.node);
    if (c.empty() || row.target_token < 0) continue;
    bool in_set = false;
    for (const TokenProb& t : c) in_set = in_set || t.id == row.target_token;
    ++r_samples_;
    ++rows_observed_;
    // The prior counts as two rows: one row outside the candidates must not set r to 0. A
    // retrieval drafter's trees are verified one visited row per rejected cycle, and at r = 0
    // its trees stayed empty (nothing but plain decoding) until a probe cycle, also where a
    // row costs a thousandth of a streamed pass (synthetic 3B at 25%).
    r_ += weight(r_samples_ + 2, 10, 0.05) * ((in_set ? 1.0 : 0.0) - r_);
    if (!in_set) continue;
    const double mass = candidate_mass(c);
    for (const TokenProb& t : c) {
      const int b = bucket(share(t.p, mass));
      ++samples_[b];
      // Until a bucket has data its prior (the identity) counts as a few samples.
      hit_rate_[b] += weight(samples_[b] + 4, 24, 0.04) * ((t.id == row.target_token ? 1.0 : 0.0) - hit_rate_[b]);
    }
  }
}

}  // namespace sf
