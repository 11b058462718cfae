// ProvisionalGeneration: EdgeLLM's provisional tokens (paper III-D). While the target's
// verification pass waits for streamed weights, a background worker keeps drafting a
// chain below the most likely leaf of the tree being verified, through a ComputeGate that
// lends it the cores only during those waits. The chain lives in a copy of the tree (the
// verifier never sees it); after verification it is kept when the target accepted the
// whole branch to the leaf and chose the chain's first token as its bonus token: the
// chain below that token starts the next tree, already drafted (Drafter::commit_carry).
// Otherwise it is discarded.
//
// Memory: the chain's draft K/V go to cells of the drafter's cache, which is allocated for
// the whole context at creation, so the bound `max_tokens` is what limits it; nothing is
// allocated while the target streams.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "spec/compute_gate.h"
#include "spec/drafter.h"
#include "spec/token_tree.h"
#include "spec/tree_builder.h"

namespace sf {

struct ProvisionalJob {
  TokenTree tree;  // in: the tree under verification; out: with the chain appended
  int32_t anchor = TokenTree::kRoot;
  const NodeDistribution* anchor_dist = nullptr;  // when the builder already drafted the anchor
  int max_tokens = 0;
  // The chain stops once the product of its draft probabilities after its first token
  // falls below this (the next tree's verification threshold; 0: no limit).
  double min_confidence = 0;
  // Out: the chain's nodes (ids of `tree`), which of them (and the anchor) were drafted,
  // with their distributions, the worker's drafting time (not counting its waits at the
  // gate), and its status.
  std::vector<int32_t> chain;
  std::vector<int32_t> drafted;
  std::vector<NodeDistribution> dists;
  double draft_seconds = 0;
  Status status;
};

// The worker's loop: runs on a background thread while `stop` is false and the chain is
// shorter than max_tokens, waiting at `gate` before each draft step (and, inside a model
// drafter, before each layer).
void run_provisional(Drafter& drafter, ComputeGate& gate, const std::atomic<bool>& stop, ProvisionalJob* job);

// After verification: when the accepted path ends at the anchor and `bonus` is the chain's
// first token, the provisional tokens are confirmed: returns how many (the bonus token
// and the chain below it) and, when the drafter can keep its work on them, commits the
// drafter (Drafter::commit_carry) and fills `carried` for the next cycle. *committed says
// whether the drafter was committed; if not, the caller commits it as usual.
int carry_provisional(Drafter& drafter, const ProvisionalJob& job, const std::vector<int32_t>& accepted, int32_t bonus,
                      CarriedDrafts* carried, bool* committed);

}  // namespace sf
