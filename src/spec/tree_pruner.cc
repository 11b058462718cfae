#include "spec/tree_pruner.h"

#include <algorithm>
#include <cmath>

namespace sf {

void TreePruner::score_children(const TokenTree& tree, int32_t parent, const float* hidden,
                                std::vector<float>* scores) const {
  const std::vector<int32_t>& children = tree.children(parent);
  if (!tree.deterministic_children(parent)) return;  // i.i.d. drafts: never pruned (scores stay 1)
  // The candidate set with the shadow tokens; a child outside it joins it.
  std::vector<int32_t> tokens;
  for (const TokenProb& c : tree.candidates(parent)) tokens.push_back(c.id);
  for (int32_t child : children)
    if (std::find(tokens.begin(), tokens.end(), tree.node(child).token) == tokens.end())
      tokens.push_back(tree.node(child).token);
  std::vector<float> s(tokens.size());
  scorer_->score(hidden, tokens, s.data());
  const float inv_t = 1.0f / config_.temperature;
  const float max = *std::max_element(s.begin(), s.end());
  double sum = 0;
  for (float& v : s) {
    v = std::exp((v - max) * inv_t);
    sum += v;
  }
  for (int32_t child : children) {
    const size_t i = std::find(tokens.begin(), tokens.end(), tree.node(child).token) - tokens.begin();
    (*scores)[child] = static_cast<float>(s[i] / sum);
  }
}

PruneDecision TreePruner::apply_safeguards(const TokenTree& tree, const std::vector<float>& scores) const {
  const int32_t n = tree.size();
  PruneDecision d;
  d.keep.assign(static_cast<size_t>(n), false);
  for (int32_t i = 0; i < n; ++i) d.keep[i] = scores[i] >= config_.theta;
  // The root's best children, and the backbone from the root down.
  std::vector<int32_t> root_children = tree.children(TokenTree::kRoot);
  std::stable_sort(root_children.begin(), root_children.end(),
                   [&](int32_t a, int32_t b) { return scores[a] > scores[b]; });
  for (size_t i = 0; i < root_children.size() && static_cast<int>(i) < config_.root_keep; ++i)
    d.keep[root_children[i]] = true;
  for (int32_t u = TokenTree::kRoot;;) {
    const std::vector<int32_t>& c = tree.children(u);
    if (c.empty()) break;
    u = *std::max_element(c.begin(), c.end(), [&](int32_t a, int32_t b) { return scores[a] < scores[b]; });
    d.keep[u] = true;
  }
  // Ancestors of kept nodes (parents have lower indices: one backward sweep).
  for (int32_t i = n - 1; i >= 0; --i)
    if (d.keep[i] && tree.node(i).parent != TokenTree::kRoot) d.keep[tree.node(i).parent] = true;

  int32_t kept = 0, leaves = 0, kept_leaves = 0;
  std::vector<bool> has_kept_child(static_cast<size_t>(n), false);
  for (int32_t i = 0; i < n; ++i)
    if (d.keep[i] && tree.node(i).parent != TokenTree::kRoot) has_kept_child[tree.node(i).parent] = true;
  for (int32_t i = 0; i < n; ++i) {
    leaves += tree.children(i).empty() ? 1 : 0;
    if (!d.keep[i]) continue;
    ++kept;
    kept_leaves += has_kept_child[i] ? 0 : 1;
  }
  const bool too_few_nodes = kept < static_cast<int32_t>(std::ceil(config_.min_keep_share * n));
  const bool too_few_leaves = kept_leaves < std::min(2, leaves);
  if (too_few_nodes || too_few_leaves) {
    d.keep.assign(static_cast<size_t>(n), true);
    d.refused = kept < n;
    kept = n;
  }
  d.kept = kept;
  return d;
}

}  // namespace sf
