// MirrorChainBuilder: Mirror-SD's draft window, a chain of gamma tokens below the root,
// that starts from a rollout carried from the last cycle (CarriedDrafts) when the
// verification reused one, and drafts only what the rollout did not reach.
//
// Greedy: each token is the draft's argmax, exactly as chain:gamma (StaticTreeBuilder)
// drafts, so the trees and the per-cycle accepted lengths equal vanilla SD's.
// Sampling: each token is drawn from the draft distribution q with a uniform keyed by the
// token's sequence position and the seed (keyed_draw, mirror_rollout.h), not from a shared
// random stream. A rollout drafted in the background and a fresh draft in the foreground
// then pick the same token from the same q, so a fixed-seed run gives the same output
// however far the time-boxed rollouts got. The chain is verified by rejection against the
// recorded q (lossless: each position's uniform decides at most one verified draw).
#pragma once

#include "spec/tree_builder.h"

namespace sf {

class MirrorChainBuilder : public TreeBuilder {
 public:
  MirrorChainBuilder(int gamma, const char* name) : gamma_(gamma), name_(name) {}
  const char* name() const override { return name_; }
  Status build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) override;
  bool accepts_carried() const override { return true; }
  bool wants_parallel_rollouts() const override { return true; }
  int gamma() const { return gamma_; }

 private:
  int gamma_;
  const char* name_;
};

// Adds the chain's next token below `parent` from its distribution (greedy: the argmax;
// sampling: keyed_draw at `position`, the new token's sequence position), with the
// records the verifier needs. Shared by the builder and the rollout worker so both pick
// the same token.
int32_t add_chain_token(TokenTree* tree, int32_t parent, const NodeDistribution& dist, bool greedy, uint64_t seed,
                        int64_t position);

}  // namespace sf
