// FrontierTreeBuilder: grows a tree node by node from a frontier of drafted candidates,
// most valuable first, and drafts the chosen nodes' children in batches.
//
// Each node v = (u, a) has a reach estimate b(v) = b(u) * c(a|u): the probability that the
// verifier's walk reaches it. The frontier F holds the candidates whose parent is in the
// tree. Two objectives share the machinery:
//  - kNodeBudget (OPT-Tree): c = the raw draft probability; insert the best candidate until
//    the tree has `node_budget` nodes, which maximises the expected accepted length for
//    that size (b never grows along a path, so the greedy choice is optimal).
//  - kGainPerCost (LEVER 4.2, Algorithm 1): c = AcceptanceCalibration (reliability r and a
//    learned calibration); the cycle's expected output G = 1 + sum b and its cost
//    C = C_draft + C_verify(rows) from the LatencyProfile; insert v* = argmax b(v)/dC(v|T)
//    while that ratio beats the tree's average G/C. dC is the verification profile's
//    increment for one more row (floored, so it is never free) plus, when v will be
//    expanded, the measured draft cost of one batched row. No fixed tree size. Where the
//    drafter reuses rejected drafts (CoordGen 3.4), the ratio's numerator is
//    b + (1 - b) * w, w the drafter's measured worth of a rejected row's target prediction
//    (Drafter::reuse_tokens_per_rejected_row): a row bought for reuse, not counted in G.
//
// Batch-aware expansion (LEVER 4.4): chosen nodes are not drafted one by one. A selection
// round inserts candidates in order of b until the next one could be beaten by a child of
// a node inserted in this round (b(next) < rho * b(inserted), rho = a running estimate of
// the best child's share c), then drafts all the round's expandable nodes in one pass. A
// node is expandable when its depth allows and, for LEVER, its best possible child could
// still pass the stopping rule.
//
// Exploration: the profile learns online only the shapes that are tried. When the tree
// stops because the next row looks too expensive and that row count has hardly been
// measured, every kProbeEvery-th such cycle adds the row anyway, so one unlucky seed
// measurement cannot keep LEVER from ever growing its trees.
//
// Children are deterministic (top candidates, also when sampling), so the verifier treats
// each as a one-hot draft and any subset can be pruned losslessly (tree_pruner.h).
// Not thread-safe.
#pragma once

#include <vector>

#include "spec/acceptance_calibration.h"
#include "spec/latency_profile.h"
#include "spec/tree_builder.h"

namespace sf {

struct FrontierBuilderOptions {
  enum class Objective { kNodeBudget, kGainPerCost };
  Objective objective = Objective::kGainPerCost;
  int node_budget = 16;  // kNodeBudget: nodes per tree
  int max_nodes = 64;    // hard cap on nodes (verification rows - 1)
  int max_depth = 12;
  int candidates = kCandidateSet;  // candidates per node that may become children
  // kGainPerCost: calibrate each candidate's probability renormalised within its candidate
  // set (a draft model's top-k), or as it is (retrieval, whose total mass says how long the
  // match is; AcceptanceCalibration).
  bool renormalise_candidates = true;
};

class FrontierTreeBuilder : public TreeBuilder {
 public:
  FrontierTreeBuilder(FrontierBuilderOptions options, const char* name)
      : options_(options), name_(name), calibration_(options.renormalise_candidates) {}
  const char* name() const override { return name_; }
  Status build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) override;
  void observe(const TokenTree& tree, const CycleStats& stats) override;
  LatencyProfile* latency_profile() override {
    return options_.objective == FrontierBuilderOptions::Objective::kGainPerCost ? &profile_ : nullptr;
  }
  AcceptanceCalibration* acceptance_calibration() override {
    return options_.objective == FrontierBuilderOptions::Objective::kGainPerCost ? &calibration_ : nullptr;
  }
  // kGainPerCost: the last tree's expected tokens per second, G / (its drafting + the
  // profile's verification of its rows); 0 for an empty tree or another objective.
  double expected_rate() const { return expected_rate_; }

 private:
  struct Candidate {
    int32_t parent;
    int32_t token;
    float draft_prob;
    double b;
  };
  double child_value(double p, double mass) const;
  // LEVER: whether drafting at all can beat a plain decoding step this cycle.
  bool root_may_pay(int context);

  FrontierBuilderOptions options_;
  const char* name_;
  LatencyProfile profile_;
  AcceptanceCalibration calibration_;
  static constexpr int kProbeEvery = 8;
  double rho_ = 0.8;  // running estimate of max_a c(a|u)
  double expected_rate_ = 0;
  int stalls_ = 0;             // cycles stopped by a barely measured row count
  int skips_ = 0;              // cycles where drafting could not pay
  std::vector<double> reach_;  // b per node of the last tree
};

}  // namespace sf
