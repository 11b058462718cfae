// SizeCapSelector: EdgeLLM's measured size bound (EdgeLlmConfig::measured_size). Each arm is
// a cap on the tree's node count (arm 0: the builder's own limit, i.e. no cap); the
// selector runs the cap whose cycles realise the most tokens per second.
//
// Why not ArmSelector (the bandit `auto` uses): one cycle's accepted length varies from 0
// to 12 on the same prompt, and caps differ by ~25% in tokens per pass, so judging each cap
// on its own cycles needs dozens of them per cap; a bench prompt has about a dozen cycles.
// But a cap only truncates the tree: nodes are added in a fixed order and each one's
// drafting does not depend on the nodes after it, so a cycle's tree under cap c is its
// first c nodes, and the tokens that cycle would have given under cap c are read off its
// accepted path (the accepted nodes with index < c, plus the target's bonus token). Every
// cycle therefore measures the tokens of every cap up to the one it ran under (all caps
// when the tree stopped below its cap), paired on the same drafts. Seconds are not
// counterfactual (the draft and the pass shrink with the cap in ways the cost models get
// wrong on this project's VM); each cap's own cycles measure them, and their noise is small.
//
// Deterministic; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sf {

class SizeCapSelector {
 public:
  // caps[0] is the builder's limit (the uncapped tree); the rest are smaller caps.
  explicit SizeCapSelector(std::vector<int> caps);

  // The arm for the next tree: each arm's first kMinCycles cycles in turn, then one
  // uncapped cycle in every kProbeEvery (the only cycles that measure the big caps'
  // tokens), else the arm with the best estimated rate.
  int choose();
  // A verified cycle built under `arm`: the tree's node count, the node indices of its
  // accepted path (root excluded, in path order) and the cycle's seconds.
  void observe(int arm, int tree_size, const std::vector<int32_t>& accepted_path, double seconds);

  int n_arms() const { return static_cast<int>(caps_.size()); }
  int cap(int arm) const { return caps_[static_cast<size_t>(arm)]; }
  int best() const;            // the arm with the highest estimated rate (-1 before any estimate)
  double rate(int arm) const;  // estimated tokens per second (0 while unknown)
  int64_t cycles(int arm) const { return arms_[static_cast<size_t>(arm)].cycles; }

  static constexpr int kMinCycles = 2;
  static constexpr int kProbeEvery = 16;

 private:
  struct Arm {
    double tokens = 0, token_weight = 0;     // decayed counterfactual tokens per cycle
    double seconds = 0, seconds_weight = 0;  // decayed seconds of its own cycles
    int64_t cycles = 0;                      // cycles run under this arm
  };
  std::vector<int> caps_;
  std::vector<Arm> arms_;
  int64_t cycle_ = 0;
};

}  // namespace sf
