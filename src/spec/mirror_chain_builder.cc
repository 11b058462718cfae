#include "spec/mirror_chain_builder.h"

#include <algorithm>

#include "spec/mirror_rollout.h"

namespace sf {

int32_t add_chain_token(TokenTree* tree, int32_t parent, const NodeDistribution& dist, bool greedy, uint64_t seed,
                        int64_t position) {
  record_candidates(tree, parent, dist);
  if (greedy) return tree->add(dist.probs[0].id, parent, dist.probs[0].p);
  const int32_t token = keyed_draw(dist.probs, seed, position);
  float p = 0;
  for (const auto& tp : dist.probs)
    if (tp.id == token) p = tp.p;
  const int32_t child = tree->add(token, parent, p);
  tree->proposals(parent).push_back(child);
  tree->draft_dist(parent) = dist.probs;
  return child;
}

Status MirrorChainBuilder::build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) {
  tree->clear();
  const int64_t max_nodes = std::min<int64_t>(ctx.max_nodes, gamma_);
  // Distributions the carried rollout already has, by node (index node + 1; kRoot = 0).
  std::vector<const NodeDistribution*> known(1, nullptr);
  if (ctx.carried) {
    *tree = ctx.carried->tree;
    known.assign(static_cast<size_t>(tree->size()) + 1, nullptr);
    for (size_t i = 0; i < ctx.carried->drafted.size(); ++i)
      known[static_cast<size_t>(ctx.carried->drafted[i] + 1)] = &ctx.carried->dists[i];
    if (tree->size() > max_nodes) {
      // A nearly full context: keep the chain's first nodes; the drafter still holds the
      // cut nodes' cells under their old ids, so nothing may be added this cycle.
      std::vector<bool> keep(static_cast<size_t>(tree->size()), false);
      for (int32_t n = 0; n < max_nodes; ++n) keep[n] = true;
      std::vector<int32_t> old_of_new;
      *tree = tree->subtree(keep, &old_of_new);
      return Status::Ok();
    }
  }
  const bool greedy = ctx.sampling.greedy();
  const uint64_t seed = mirror_draft_seed(ctx.sampling);
  int32_t node = tree->empty() ? TokenTree::kRoot : tree->size() - 1;  // the carried chain's leaf
  std::vector<NodeDistribution> out;
  while (tree->size() < max_nodes) {
    const size_t at = static_cast<size_t>(node + 1);
    NodeDistribution dist;
    if (at < known.size() && known[at]) {
      dist = *known[at];
    } else {
      SF_RETURN_IF_ERROR(drafter.draft(*tree, {node}, &out));
      if (out.empty()) break;  // the draft's context is full
      dist = std::move(out[0]);
    }
    if (dist.probs.empty()) break;
    const int32_t depth = node == TokenTree::kRoot ? 0 : tree->node(node).depth;
    node = add_chain_token(tree, node, dist, greedy, seed, ctx.context + depth + 1);
  }
  return Status::Ok();
}

}  // namespace sf
