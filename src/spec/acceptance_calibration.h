// AcceptanceCalibration: LEVER's Calibrate(p_d(a|u), C(u), r) (4.2, eq. 3), learned online.
//
// The estimate that the target picks draft token a below node u is
//   r * h(p_d(a|u) / sum_{b in C(u)} p_d(b|u))
// where r is the reliability factor, a moving average over verified rows of "the target's
// token is in the candidate set C(u)", and h maps the draft probability renormalised
// within C(u) to how often the target actually picked such a token (ten probability
// buckets, moving averages over verified rows whose target token was in C(u), starting
// from the identity). r alone (the paper's description) only scales all candidates
// together; h also corrects a draft that is over- or under-confident at some probability
// levels, while keeping the draft's ranking within a bucket. Both learn from every row the
// acceptance walk visits, so they follow the draft/target agreement of the current text.
// A drafter whose candidates' total mass is itself a confidence (retrieval: a one-token
// match carries at most 1/2, a long match nearly 1) is calibrated on its raw probabilities
// instead (renormalise = false): renormalising would make a one-token match look as sure as
// a long one.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "spec/cycle_stats.h"
#include "spec/token_tree.h"

namespace sf {

class AcceptanceCalibration {
 public:
  static constexpr int kBuckets = 10;
  explicit AcceptanceCalibration(bool renormalise = true);

  // p: the token's draft probability; candidate_mass: the sum over its candidate set.
  double calibrate(double p, double candidate_mass) const;
  double reliability() const { return r_; }
  // Rows learnt from since construction (begin_text() does not reset it): how far the
  // calibration is from its priors.
  uint64_t rows_observed() const { return rows_observed_; }
  // A new text: r starts again from its prior, while h is kept. For retrieval, r is whether
  // this text repeats itself (the target's token among the context's continuations), which
  // the last prompt says little about; h (how often the target picks a continuation that
  // holds a given share of the matches) is the retrieval's own.
  void begin_text();
  // Learns from the rows of `tree` the verifier visited.
  void observe(const TokenTree& tree, const std::vector<VisitedRow>& visited);

 private:
  static int bucket(double x);
  // The probability h() reads: p / candidate_mass when renormalising, else p.
  double share(double p, double candidate_mass) const;
  bool renormalise_;
  static constexpr double kReliabilityPrior = 0.9;
  double r_ = kReliabilityPrior;
  uint64_t r_samples_ = 0;
  uint64_t rows_observed_ = 0;
  std::array<double, kBuckets> hit_rate_;
  std::array<uint64_t, kBuckets> samples_{};
};

double candidate_mass(const std::vector<TokenProb>& candidates);

}  // namespace sf
