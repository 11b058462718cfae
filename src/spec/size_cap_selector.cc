#include "spec/size_cap_selector.h"

#include <algorithm>

#include "base/check.h"

namespace sf {

namespace {
// Tokens are paired and plentiful (every cycle counts for several caps): a long memory.
// Seconds come only from the arm's own cycles: a shorter one, so a change of regime
// (a prompt's context growing, the pass getting slower) shows within a few cycles.
constexpr double kTokenDecay = 0.98;
constexpr double kSecondsDecay = 0.8;
// A cycle counts as at most this many of the arm's typical ones (an I/O hiccup).
constexpr double kOutlierFactor = 2.0;
}  // namespace

SizeCapSelector::SizeCapSelector(std::vector<int> caps) : caps_(std::move(caps)) {
  SF_CHECK(!caps_.empty());
  arms_.resize(caps_.size());
}

double SizeCapSelector::rate(int arm) const {
  const Arm& a = arms_[static_cast<size_t>(arm)];
  if (a.token_weight <= 0 || a.seconds <= 0) return 0;
  return (a.tokens / a.token_weight) / (a.seconds / a.seconds_weight);
}

int SizeCapSelector::best() const {
  int best = -1;
  for (int a = 0; a < n_arms(); ++a)
    if (rate(a) > 0 && (best < 0 || rate(a) > rate(best))) best = a;
  return best;
}

int SizeCapSelector::choose() {
  for (int a = 0; a < n_arms(); ++a)
    if (arms_[static_cast<size_t>(a)].cycles < kMinCycles) return a;
  if (cycle_ % kProbeEvery == 0) return 0;
  const int top = best();
  return top >= 0 ? top : 0;
}

void SizeCapSelector::observe(int arm, int tree_size, const std::vector<int32_t>& accepted_path, double seconds) {
  SF_CHECK(arm >= 0 && arm < n_arms());
  ++cycle_;
  Arm& own = arms_[static_cast<size_t>(arm)];
  ++own.cycles;
  if (seconds > 0) {
    if (own.seconds_weight >= 1) seconds = std::min(seconds, kOutlierFactor * own.seconds / own.seconds_weight);
    own.seconds = kSecondsDecay * own.seconds + seconds;
    own.seconds_weight = kSecondsDecay * own.seconds_weight + 1;
  }
  // The caps this cycle's tree tells about: those it fitted under whole, and those it
  // would have been cut to (a cap above the one it ran under, when that cap cut it, is
  // unknown: the tree might have grown there).
  const bool cut = tree_size >= caps_[static_cast<size_t>(arm)];
  for (int a = 0; a < n_arms(); ++a) {
    const int cap = caps_[static_cast<size_t>(a)];
    if (cut && cap > caps_[static_cast<size_t>(arm)]) continue;
    int accepted = 0;
    while (accepted < static_cast<int>(accepted_path.size()) && accepted_path[static_cast<size_t>(accepted)] < cap)
      ++accepted;
    Arm& est = arms_[static_cast<size_t>(a)];
    est.tokens = kTokenDecay * est.tokens + accepted + 1;
    est.token_weight = kTokenDecay * est.token_weight + 1;
  }
}

}  // namespace sf
