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
// The heads: a trained adapter (cats_adapter.h) on the shallow hidden state, then the
// target's final norm + LM head; without an adapter the plain early-exit head (the final
// norm + LM head directly). The LM head must be resident (every draft pass reads it); the
// session pins it. Adapters keep their own KV caches, filled by prefill() and by every
// pass that runs their layer, committed and rolled back with the target's.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "sampling/sampler.h"
#include "spec/cats_adapter.h"
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
  // Adapters may be null (the plain exit head); the verifier adapter is unused by kangaroo.
  CatsCycle(ModelRunner& target, const CatsCycleOptions& options, std::unique_ptr<CatsAdapter> draft_adapter = nullptr,
            std::unique_ptr<CatsAdapter> verifier_adapter = nullptr);

  const CatsCycleOptions& options() const { return options_; }
  bool has_adapters() const { return draft_adapter_ || verifier_adapter_; }
  // Memory of the adapters (weights and KV caches).
  uint64_t adapter_bytes() const;
  // How many committed cells the target and the adapters all hold (prefix reuse).
  int n_committed() const;
  // Forgets all but the first n committed cells, in the target and the adapters.
  void truncate(int n);
  // Appends tokens to the committed sequence in chunks of max_batch rows, through the
  // same layer ranges as a cycle so the adapters' caches are filled too; the last row's
  // logits (the target's own head) into *last_logits when given.
  Status prefill(const std::vector<int32_t>& tokens, int max_batch, std::vector<float>* last_logits = nullptr);
  // Runs one cycle below `pending` (the last committed token, not yet run) with at most
  // max_nodes tree nodes, and commits the accepted path (pending + accepted nodes) in the
  // target's cache. gamma: this cycle's drafting passes (the session's or a per-call one).
  Status run(int32_t pending, int gamma, int max_nodes, Sampler& sampler, const std::vector<int32_t>& history,
             CatsCycleResult* out);

 private:
  // Head logits of hidden rows [n, n_embd] into logits_ ([n, n_vocab]): through the
  // adapter (which also writes the rows' K/V) when there is one.
  Status head(CatsAdapter* adapter, const ForwardBatch& rows, const float* hidden, int64_t n);
  // Rows through [0, end) from their embeddings, feeding each adapter its layer's hidden
  // states on the way (K/V only); the output is target_.hidden().
  Status shallow_pass(const ForwardBatch& rows, int end);

  ModelRunner& target_;
  CatsCycleOptions options_;
  std::unique_ptr<CatsAdapter> draft_adapter_, verifier_adapter_;
  std::vector<float> adapted_;  // [rows, n_embd] adapter outputs
  std::vector<float> logits_;
  std::vector<float> row_logits_;
  std::vector<float> h_draft_;  // [gamma + 1, n_embd] chain rows after layer L_DM
  std::vector<float> h_final_;  // [rows, n_embd] every tree row after layer L_SV
};

}  // namespace sf
