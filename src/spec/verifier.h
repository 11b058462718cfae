// Verification of a token tree against the target, one path walk from the root.
//
// Greedy (temperature 0): accept a child while its token equals the target's argmax at its
// parent's row; the argmax at the last accepted row is the bonus token. Exact.
//
// Stochastic: lossless multi-draft rejection sampling. At each row the target
// distribution p (after the sampler's processors) is compared with how the children were
// drafted:
//  - children drawn i.i.d. from a draft distribution q (recorded in the tree): try the
//    samples in order, accepting sample x with probability min(1, p(x)/q(x)); after a
//    rejection p becomes normalize(max(p - q, 0)) (SpecInfer's recursive rejection);
//  - children chosen deterministically (e.g. top-k): each is a one-hot q, so the walk
//    accepts child c with probability p(c) and otherwise removes c from p (sampling
//    without replacement).
// If no child is accepted, the bonus token is drawn from the remaining p. Either way the
// emitted token has exactly the distribution p, so the output distribution equals the
// target's.
//
// Logits are requested row by row (`row_logits`), only for rows the walk visits, so the
// caller can skip the LM head for the rest (LEVER 4.4).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sampling/sampler.h"
#include "spec/token_tree.h"

namespace sf {

struct VerifyResult {
  std::vector<int32_t> accepted;  // node indices from the root's child downwards
  int32_t bonus = -1;             // the token sampled after the last accepted node
  int64_t rows_visited = 0;       // rows whose logits were requested
};

// row_logits(row) returns [n_vocab] logits of that batch row (0 = root, 1 + i = node i).
using RowLogitsFn = std::function<const float*(int64_t row)>;

// history: the committed sequence (for repetition penalties); path tokens are appended.
VerifyResult verify_tree(const TokenTree& tree, int n_vocab, const RowLogitsFn& row_logits, Sampler& sampler,
                         const std::vector<int32_t>& history);

}  // namespace sf
