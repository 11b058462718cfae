// TreePruner: LEVER's early-exit pruning (4.3). At the exit layer of the verification
// pass, every tree edge (u, a) is scored from the hidden state of its parent's row,
// s(u, a) (exit_scorer.h), and normalised within u's candidate set C(u), which includes
// the shadow tokens (candidates that did not become children), with temperature tau_E:
//   s_norm(u, a) = exp(s(u,a)/tau) / sum_{b in C(u)} exp(s(u,b)/tau).
// Edges with s_norm < theta are removable; the keep set then follows the paper's
// safeguards:
//  - every ancestor of a kept node is kept;
//  - a backbone path is kept: from the root, the child with the highest score, down to a
//    leaf;
//  - the root keeps its `root_keep` best children (uncertainty is highest near the root);
//  - a decision that keeps fewer than min_keep_share of the nodes, or fewer leaves than
//    min(2, the tree's leaves), is refused (nothing is pruned).
// Only children drafted deterministically are prunable: a verifier treats each as a
// one-hot draft, so verifying any subset of them leaves the output distribution exactly
// the target's (greedy and sampled). Children drawn i.i.d. are always kept.
// Not thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "spec/exit_scorer.h"
#include "spec/spec_config.h"
#include "spec/token_tree.h"

namespace sf {

struct PruneDecision {
  std::vector<bool> keep;  // per node
  int32_t kept = 0;
  bool refused = false;  // the safeguards rejected the decision (everything kept)
};

class TreePruner {
 public:
  TreePruner(const PruneConfig& config, std::unique_ptr<ExitScorer> scorer)
      : config_(config), scorer_(std::move(scorer)) {}
  const ExitScorer& scorer() const { return *scorer_; }
  const PruneConfig& config() const { return config_; }

  // hidden_of_row(r): the exit-layer hidden state of batch row r (0 = root, 1 + i = node i).
  template <typename HiddenOfRow>
  PruneDecision decide(const TokenTree& tree, const HiddenOfRow& hidden_of_row) const {
    std::vector<float> scores(static_cast<size_t>(tree.size()), 1.0f);
    for (int32_t parent = TokenTree::kRoot; parent < tree.size(); ++parent)
      if (!tree.children(parent).empty()) score_children(tree, parent, hidden_of_row(parent + 1), &scores);
    return apply_safeguards(tree, scores);
  }

  // Normalised scores of `parent`'s children (written into scores[child]).
  void score_children(const TokenTree& tree, int32_t parent, const float* hidden, std::vector<float>* scores) const;
  PruneDecision apply_safeguards(const TokenTree& tree, const std::vector<float>& scores) const;

 private:
  PruneConfig config_;
  std::unique_ptr<ExitScorer> scorer_;
};

}  // namespace sf
