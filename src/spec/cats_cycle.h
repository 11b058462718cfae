// CatsCycle: one decoding cycle of CATS (paper Algorithm 1) over the target's own layers,
// and of its Kangaroo-style baseline (shallow draft, full-model verification).
//
// Layers [0, L_DM) draft, [L_DM, L_SV) verify shallowly, [L_SV, N) run once in the final
// pass (cats_boundaries.h). Nothing is computed twice: every pass writes the target's own
// KV cache for the layers it runs, and the next stage starts from the hidden states the
// previous one left, so each row of the final tree runs every layer exactly once.
//
//  1. Draft: gamma single-row passes through [0, L_DM) (pending token, then each drafted
//     token), each followed by the draft head; then d_gamma through [0, L_DM) too, so a
//     fully accepted chain still gets its bonus token.
//  2. Shallow verification: the gamma + 1 chain rows in one pass through [L_DM, L_SV) from
//     their draft-stage hidden states; the verifier head's top token at row i is compared
//     with d_{i+1}; each disagreement becomes a correction: a sibling of d_{i+1} (judged by
//     the same parent distribution), a leaf. Optional extra branches (the draft head's
//     next-best tokens) are leaves too. Leaves run [0, L_SV) in one pass under the tree
//     mask.
//  3. Final pass: every row through [L_SV, N) from its layer-L_SV hidden state (the streamed
//     suffix is read once); the verifier walks main branch -> a correction at the first
//     rejection -> bonus, computing the LM head only on rows it visits.
// Kangaroo: no stage 2; the final pass runs the chain through [L_DM, N).
//
// Losslessness: children are chosen deterministically (argmax of the heads' logits), so
// verify_tree treats each as a one-hot draft (exact in greedy and sampled decoding).
//
// The heads: the plain early-exit head (the target's final norm + LM head on the shallow
// hidden state). The LM head must be resident (every draft pass reads it); the session
// pins it. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "sampling/sampler.h"
#include "spec/cats_boundaries.h"
#include "spec/model_runner.h"
#include "spec/token_tree.h"
#include "spec/verifier.h"

namespace sf {

struct CatsCycleOptions {
  CatsBoundaries cuts;
  int gamma = 5;           // drafting passes per cycle
  int extra_branches = 0;  // next-best draft tokens per position, as side leaves
};

struct CatsCycleResult {
  TokenTree tree;                 // chain nodes 0..gamma-1 (d_1..d_gamma), then the leaves
  std::vector<int32_t> accepted;  // nodes of `tree` on the accepted path
  int32_t bonus = -1;
  int32_t chain = 0;           // drafted chain length (gamma, or less when the context is nearly full)
  int32_t corrections = 0;     // shallow-verifier disagreements (correction leaves)
  bool accepted_leaf = false;  // the path ended in a correction or an extra branch
  int64_t rows_visited = 0;    // rows whose LM head the final walk computed
  double draft_seconds = 0;    // stage 1
  double shallow_seconds = 0;  // stage 2 (shallow pass + leaves)
  double final_seconds = 0;    // stage 3 + walk + commit
};

class CatsCycle {
 public:
  CatsCycle(ModelRunner& target, const CatsCycleOptions& options);

  const CatsCycleOptions& options() const { return options_; }
  // Runs one cycle below `pending` (the last committed token, not yet run) with at most
  // max_nodes tree nodes, and commits the accepted path (pending + accepted nodes) in the
  // target's cache. gamma: this cycle's drafting passes (the session's or a per-call one).
  Status run(int32_t pending, int gamma, int max_nodes, Sampler& sampler, const std::vector<int32_t>& history,
             CatsCycleResult* out);

 private:
  // Early-exit head logits of hidden rows [n, n_embd] into logits_ ([n, n_vocab]).
  Status head(const float* hidden, int64_t n);

  ModelRunner& target_;
  CatsCycleOptions options_;
  std::vector<float> logits_;
  std::vector<float> row_logits_;
  std::vector<float> h_draft_;  // [gamma + 1, n_embd] chain rows after layer L_DM
  std::vector<float> h_final_;  // [rows, n_embd] every tree row after layer L_SV
};

}  // namespace sf
