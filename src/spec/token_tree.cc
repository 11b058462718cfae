#include "spec/token_tree.h"

#include <algorithm>

#include "base/check.h"

namespace sf {

void TokenTree::clear() {
  nodes_.clear();
  children_.assign(1, {});
  dists_.assign(1, {});
  proposals_.assign(1, {});
  candidates_.assign(1, {});
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
  candidates_.emplace_back();
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

TokenTree TokenTree::subtree(const std::vector<bool>& keep, std::vector<int32_t>* old_of_new) const {
  SF_CHECK(static_cast<int32_t>(keep.size()) == size());
  TokenTree out;
  std::vector<int32_t> new_of_old(nodes_.size(), -1);
  old_of_new->clear();
  for (int32_t i = 0; i < size(); ++i) {
    if (!keep[i]) continue;
    const int32_t parent = nodes_[i].parent;
    SF_CHECK(parent == kRoot || new_of_old[parent] >= 0, "kept node %d without its parent", i);
    new_of_old[i] = out.add(nodes_[i].token, parent == kRoot ? kRoot : new_of_old[parent], nodes_[i].draft_prob);
    old_of_new->push_back(i);
  }
  for (int32_t old = kRoot; old < size(); ++old) {
    if (old != kRoot && !keep[old]) continue;
    const int32_t now = old == kRoot ? kRoot : new_of_old[old];
    out.candidates(now) = candidates(old);
    out.draft_dist(now) = draft_dist(old);
    for (int32_t child : proposals(old)) {
      SF_CHECK(keep[child], "an i.i.d. drafted child was dropped");
      out.proposals(now).push_back(new_of_old[child]);
    }
  }
  return out;
}

TokenTree TokenTree::subtree_below(int32_t node, std::vector<int32_t>* old_of_new) const {
  SF_CHECK(node >= 0 && node < size());
  TokenTree out;
  std::vector<int32_t> new_of_old(nodes_.size(), -1);
  old_of_new->clear();
  // Parents-first storage: a descendant's index is greater than node's.
  for (int32_t i = node + 1; i < size(); ++i) {
    const int32_t parent = nodes_[i].parent;
    int32_t new_parent = -2;
    if (parent == node)
      new_parent = kRoot;
    else if (parent > node && new_of_old[parent] >= 0)
      new_parent = new_of_old[parent];
    if (new_parent == -2) continue;
    new_of_old[i] = out.add(nodes_[i].token, new_parent, nodes_[i].draft_prob);
    old_of_new->push_back(i);
  }
  auto copy_records = [&](int32_t old, int32_t now) {
    out.candidates(now) = candidates(old);
    out.draft_dist(now) = draft_dist(old);
    for (int32_t child : proposals(old)) out.proposals(now).push_back(new_of_old[child]);
  };
  copy_records(node, kRoot);
  for (size_t i = 0; i < old_of_new->size(); ++i) copy_records((*old_of_new)[i], static_cast<int32_t>(i));
  return out;
}

std::vector<int32_t> TokenTree::path_to(int32_t node) const {
  std::vector<int32_t> path;
  for (int32_t n = node; n != kRoot; n = nodes_[n].parent) path.push_back(n);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace sf
