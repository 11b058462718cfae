// TokenTree: the draft a drafter proposes and the target verifies in one pass.
//
// The tree hangs below a root: the last committed token, which the target has not run yet
// (the "pending" token). Node i holds a token, its parent (-1 for children of the root),
// its depth (1 for children of the root) and the draft probability of the token.
// Nodes are stored parents-first (a node's index is greater than its parent's).
//
// For lossless stochastic verification a parent also records how its children were
// drafted: the draft distribution q it sampled from and the sequence of i.i.d. samples
// (a token sampled twice appears twice in `proposals` but is one node).
//
// Every expanded node also keeps its candidate set C(u): the drafter's top tokens below it
// with their draft probabilities, whether or not they became children. Tree builders rank
// the frontier with it and early-exit pruning normalises scores over it (LEVER 4.2-4.3:
// the candidates that are not children are the "shadow tokens").
#pragma once

#include <cstdint>
#include <vector>

#include "sampling/sampler.h"

namespace sf {

struct TreeNode {
  int32_t token = 0;
  int32_t parent = -1;
  int32_t depth = 1;
  float draft_prob = 0;
};

class TokenTree {
 public:
  static constexpr int32_t kRoot = -1;

  void clear();
  int32_t add(int32_t token, int32_t parent, float draft_prob);

  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  bool empty() const { return nodes_.empty(); }
  const TreeNode& node(int32_t i) const { return nodes_[i]; }
  int32_t max_depth() const;
  // Children of a node (kRoot for the root), in insertion order.
  const std::vector<int32_t>& children(int32_t parent) const { return children_[parent + 1]; }
  int32_t find_child(int32_t parent, int32_t token) const;
  // The tree of the kept nodes (every kept node's parent must be kept), with its drafting
  // records; old_of_new[i] is the node of this tree that node i of the result was.
  TokenTree subtree(const std::vector<bool>& keep, std::vector<int32_t>* old_of_new) const;
  // The tree below `node` re-rooted there: node's children become children of the root,
  // depths shrink by node's depth; drafting records come along. old_of_new as subtree().
  TokenTree subtree_below(int32_t node, std::vector<int32_t>* old_of_new) const;
  // Node indices from the root's child down to `node`.
  std::vector<int32_t> path_to(int32_t node) const;

  // Stochastic drafting records (see header comment). Indexed by parent + 1.
  std::vector<TokenProb>& draft_dist(int32_t parent) { return dists_[parent + 1]; }
  const std::vector<TokenProb>& draft_dist(int32_t parent) const { return dists_[parent + 1]; }
  std::vector<int32_t>& proposals(int32_t parent) { return proposals_[parent + 1]; }
  const std::vector<int32_t>& proposals(int32_t parent) const { return proposals_[parent + 1]; }
  // Candidate set of an expanded node (empty until it is expanded), by descending probability.
  std::vector<TokenProb>& candidates(int32_t parent) { return candidates_[parent + 1]; }
  const std::vector<TokenProb>& candidates(int32_t parent) const { return candidates_[parent + 1]; }
  // True when the children below `parent` were drafted deterministically (no i.i.d. samples):
  // the verifier then treats each child as a one-hot draft, and any subset of them may be
  // verified without changing the output distribution (what makes pruning lossless).
  bool deterministic_children(int32_t parent) const { return proposals_[parent + 1].empty(); }

 private:
  std::vector<TreeNode> nodes_;
  std::vector<std::vector<int32_t>> children_ = {{}};
  std::vector<std::vector<TokenProb>> dists_ = {{}};
  std::vector<std::vector<int32_t>> proposals_ = {{}};
  std::vector<std::vector<TokenProb>> candidates_ = {{}};
};

}  // namespace sf
