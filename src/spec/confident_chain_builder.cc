#include "spec/confident_chain_builder.h"

namespace sf {

Status ConfidentChainBuilder::build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) {
  tree->clear();
  // Under sampling, i.i.d. drafts are verified by rejection against their recorded q, which
  // needs each drafted token to be an unconditioned sample of q. Dropping short chains
  // breaks that: a kept first token is one whose continuation was confident, a biased
  // sample (measured: the chi-square test fails). So with a minimum the chain takes the
  // draft's top token instead (deterministic children, verified exactly as one-hot
  // drafts whatever rule chose them, as llama.cpp drafts); without one, the stop only
  // decides whether a next sample is drawn, and the samples stay i.i.d.
  const bool iid = !ctx.sampling.greedy() && min_len_ == 0;
  int32_t node = TokenTree::kRoot;
  std::vector<NodeDistribution> dists;
  for (int depth = 0; depth < max_len_ && tree->size() < ctx.max_nodes; ++depth) {
    SF_RETURN_IF_ERROR(drafter.draft(*tree, {node}, &dists));
    if (dists.empty() || dists[0].probs.empty()) break;  // the drafter has no room left
    // Distributions are sorted by descending probability: probs[0] is the top candidate.
    if (dists[0].probs[0].p < p_min_) break;
    record_candidates(tree, node, dists[0]);
    const int32_t child = tree->size();
    if (!iid) {
      add_top_children(tree, node, dists[0], 1);
    } else {
      add_sampled_children(tree, node, std::move(dists[0]), 1, *ctx.draft_sampler);
    }
    if (tree->size() == child) break;
    node = child;
  }
  // Too short to be worth a verification: decode this cycle without speculation. (The
  // drafter's work on the dropped nodes is discarded when the cycle commits.)
  if (tree->size() < min_len_) tree->clear();
  return Status::Ok();
}

}  // namespace sf
