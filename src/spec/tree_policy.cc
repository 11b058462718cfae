#include "spec/tree_policy.h"

#include <algorithm>

namespace sf {

int StaticTreePolicy::children(const TokenTree& tree, int32_t parent) {
  const int32_t depth = parent == TokenTree::kRoot ? 0 : tree.node(parent).depth;
  if (depth >= static_cast<int32_t>(widths_.size())) return 0;
  const int n = static_cast<int>(std::min<int64_t>(widths_[depth], remaining_));
  remaining_ -= n;
  return std::max(n, 0);
}

std::unique_ptr<TreePolicy> make_tree_policy(const SpecConfig& config) {
  return std::make_unique<StaticTreePolicy>(tree_widths(config), SpecConfig::method_name(config.method));
}

}  // namespace sf
