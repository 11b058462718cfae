#include "spec/token_tree.h"

#include <algorithm>

#include "base/check.h"

namespace sf {

void TokenTree::clear() {
  nodes_.clear();
  children_.assign(1, {});
  dists_.assign(1, {});
  proposals_.assign(1, {});
}

int32_t TokenTree::add(int32_t token, int32_t parent, float draft_prob) {
  SF_CHECK(parent >= kRoot && parent < size());
  TreeNode n;
  n.token = token;
  n.parent = parent;
  n.depth = parent == kRoot ? 1 : nodes_[parent].depth + 1;
  n.draft_prob = draft_prob;
  nodes_.push_back(n);
  children_.emplace_back();
  dists_.emplace_back();
  proposals_.emplace_back();
  const int32_t id = size() - 1;
  children_[parent + 1].push_back(id);
  return id;
}

int32_t TokenTree::max_depth() const {
  int32_t d = 0;
  for (const auto& n : nodes_) d = std::max(d, n.depth);
  return d;
}

int32_t TokenTree::find_child(int32_t parent, int32_t token) const {
  for (int32_t c : children(parent))
    if (nodes_[c].token == token) return c;
  return -1;
}

std::vector<int32_t> TokenTree::path_to(int32_t node) const {
  std::vector<int32_t> path;
  for (int32_t n = node; n != kRoot; n = nodes_[n].parent) path.push_back(n);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace sf
