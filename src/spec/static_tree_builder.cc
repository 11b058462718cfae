#include "spec/static_tree_builder.h"

#include <algorithm>

namespace sf {

Status StaticTreeBuilder::build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) {
  tree->clear();
  int64_t remaining = ctx.max_nodes;
  // Children each node of `level` gets, in order, until the node limit is used up.
  std::vector<int32_t> level = {TokenTree::kRoot};
  std::vector<NodeDistribution> dists;
  for (size_t depth = 0; depth < widths_.size() && !level.empty(); ++depth) {
    std::vector<int32_t> expand;
    std::vector<int> widths;
    for (int32_t node : level) {
      const int n = static_cast<int>(std::min<int64_t>(widths_[depth], remaining));
      if (n <= 0) break;
      remaining -= n;
      expand.push_back(node);
      widths.push_back(n);
    }
    if (expand.empty()) break;
    SF_RETURN_IF_ERROR(drafter.draft(*tree, expand, &dists));
    std::vector<int32_t> next;
    for (size_t i = 0; i < dists.size(); ++i) {
      const int32_t before = tree->size();
      record_candidates(tree, expand[i], dists[i]);
      if (ctx.sampling.greedy()) {
        add_top_children(tree, expand[i], dists[i], widths[i]);
      } else {
        add_sampled_children(tree, expand[i], std::move(dists[i]), widths[i], *ctx.draft_sampler);
      }
      for (int32_t c = before; c < tree->size(); ++c) next.push_back(c);
    }
    level = std::move(next);
  }
  return Status::Ok();
}

}  // namespace sf
