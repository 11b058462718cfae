// ConfidentChainBuilder: llama.cpp's draft loop for chain speculation (its --draft-p-min
// and --draft-min). The chain stops early where the draft's most likely next token has
// probability below p_min: that token would probably be rejected, so drafting and
// verifying it would cost more than it is expected to save. A chain that ends up shorter
// than min_len is dropped and the cycle decodes plainly (one token per target pass, no
// verification rows spent on a draft too short to pay for its cost).
//
// Both decisions look at the draft's own distributions only, never at the target, so the
// output stays exactly the target's (greedy and sampled; under sampling with a minimum
// the chain holds the draft's top tokens, see build()).
#pragma once

#include "spec/tree_builder.h"

namespace sf {

class ConfidentChainBuilder : public TreeBuilder {
 public:
  // max_len: tokens drafted at most per cycle; min_len: a shorter chain is dropped (0: never);
  // p_min: stop below this top probability (0: never stop early).
  ConfidentChainBuilder(int max_len, int min_len, float p_min, const char* name)
      : max_len_(max_len), min_len_(min_len), p_min_(p_min), name_(name) {}
  const char* name() const override { return name_; }
  Status build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) override;

 private:
  int max_len_;
  int min_len_;
  float p_min_;
  const char* name_;
};

}  // namespace sf
