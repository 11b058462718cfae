// Drafter: proposes token trees continuing the committed sequence. Implementations: a
// separate draft model (draft_model_drafter.h); later the target's own shallow layers
// (self-speculation) and text retrieved from the context.
//
// The protocol per cycle: propose() builds a tree below the last committed token, shaped
// by the TreePolicy; after verification, commit() reports the accepted nodes and the bonus
// token, which become part of the committed sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "sampling/sampler.h"
#include "spec/token_tree.h"
#include "spec/tree_policy.h"

namespace sf {

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual const char* name() const = 0;
  // Memory the drafter keeps resident (counted against the session's budget).
  virtual uint64_t resident_bytes() const = 0;
  // Starts a new sequence whose committed tokens are `prompt`.
  virtual void reset(const std::vector<int32_t>& prompt) = 0;
  // Greedy sampling drafts the top-k children; otherwise children are i.i.d. draws from
  // the drafter's distribution (recorded in the tree for lossless verification).
  // draft_sampler supplies the drafter's randomness; history is the committed sequence.
  virtual Status propose(TreePolicy& policy, const SamplingParams& sampling, Sampler& draft_sampler,
                         const std::vector<int32_t>& history, TokenTree* tree) = 0;
  virtual void commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) = 0;
};

}  // namespace sf
