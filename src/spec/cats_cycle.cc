#include "spec/cats_cycle.h"

#include <algorithm>
#include <numeric>

#include "base/check.h"
#include "base/timer.h"
#include "ops/top_k.h"
#include "spec/tree_batch.h"

namespace sf {

namespace {

// The given rows of a batch (cells, positions and mask rows unchanged).
ForwardBatch batch_rows(const ForwardBatch& b, int64_t begin, int64_t end) {
  ForwardBatch out;
  out.n_kv = b.n_kv;
  for (int64_t r = begin; r < end; ++r) {
    out.tokens.push_back(b.tokens[r]);
    out.positions.push_back(b.positions[r]);
    out.kv_cells.push_back(b.kv_cells[r]);
    out.mask.insert(out.mask.end(), b.mask.begin() + r * b.n_kv, b.mask.begin() + (r + 1) * b.n_kv);
  }
  return out;
}

// Token ids of the `k` largest logits, best first (ties: lower id first).
std::vector<int32_t> top_tokens(const float* logits, int n_vocab, int k) {
  std::vector<int32_t> ids;
  top_k_indices(logits, n_vocab, k, &ids);
  return ids;
}

}  // namespace

CatsCycle::CatsCycle(ModelRunner& target, const CatsCycleOptions& options, std::unique_ptr<CatsAdapter> draft_adapter,
                     std::unique_ptr<CatsAdapter> verifier_adapter)
    : target_(target),
      options_(options),
      draft_adapter_(std::move(draft_adapter)),
      verifier_adapter_(options.cuts.kangaroo ? nullptr : std::move(verifier_adapter)) {
  const CatsBoundaries& c = options_.cuts;
  SF_CHECK(c.ldm >= 1 && c.lsv >= c.ldm && c.lsv < target.hparams().n_layer, "CATS cuts %d/%d of %d layers", c.ldm,
           c.lsv, target.hparams().n_layer);
  SF_CHECK(!draft_adapter_ || draft_adapter_->layer() == c.ldm);
  SF_CHECK(!verifier_adapter_ || verifier_adapter_->layer() == c.lsv);
}

uint64_t CatsCycle::adapter_bytes() const {
  return (draft_adapter_ ? draft_adapter_->resident_bytes() : 0) +
         (verifier_adapter_ ? verifier_adapter_->resident_bytes() : 0);
}

int CatsCycle::n_committed() const {
  int n = target_.n_past();
  if (draft_adapter_) n = std::min(n, draft_adapter_->n_past());
  if (verifier_adapter_) n = std::min(n, verifier_adapter_->n_past());
  return n;
}

void CatsCycle::truncate(int n) {
  target_.truncate(n);
  if (draft_adapter_) draft_adapter_->truncate(n);
  if (verifier_adapter_) verifier_adapter_->truncate(n);
}

Status CatsCycle::shallow_pass(const ForwardBatch& rows, int end) {
  const int ldm = options_.cuts.ldm, lsv = options_.cuts.lsv;
  if (!has_adapters()) return target_.forward_layers(rows, 0, end, nullptr);
  SF_RETURN_IF_ERROR(target_.forward_layers(rows, 0, std::min(ldm, end), nullptr));
  if (draft_adapter_) draft_adapter_->forward(rows, target_.hidden(), nullptr);
  if (end <= ldm) return Status::Ok();
  if (std::min(lsv, end) > ldm)
    SF_RETURN_IF_ERROR(target_.forward_layers(rows, ldm, std::min(lsv, end), target_.hidden()));
  if (verifier_adapter_ && end >= lsv) verifier_adapter_->forward(rows, target_.hidden(), nullptr);
  if (end > std::max(lsv, ldm))
    SF_RETURN_IF_ERROR(target_.forward_layers(rows, std::max(lsv, ldm), end, target_.hidden()));
  return Status::Ok();
}

Status CatsCycle::prefill(const std::vector<int32_t>& tokens, int max_batch, std::vector<float>* last_logits) {
  const int N = target_.hparams().n_layer;
  for (size_t begin = 0; begin < tokens.size(); begin += static_cast<size_t>(max_batch)) {
    const size_t end = std::min(tokens.size(), begin + static_cast<size_t>(max_batch));
    const std::vector<int32_t> chunk(tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                                     tokens.begin() + static_cast<std::ptrdiff_t>(end));
    const int32_t n_past = target_.n_past();
    if (n_past + static_cast<int>(chunk.size()) > target_.n_ctx())
      return Status::Errorf("sequence of %zu tokens does not fit the context of %d tokens (use --ctx-size)",
                            n_past + chunk.size(), target_.n_ctx());
    SF_RETURN_IF_ERROR(shallow_pass(ForwardBatch::causal(chunk, n_past), N));
    if (last_logits && end == tokens.size()) {
      last_logits->resize(static_cast<size_t>(target_.hparams().n_vocab));
      const float* last_row = target_.hidden() + (chunk.size() - 1) * static_cast<size_t>(target_.hparams().n_embd);
      SF_RETURN_IF_ERROR(target_.head_logits(last_row, 1, last_logits->data()));
    }
    std::vector<int32_t> cells(chunk.size());
    std::iota(cells.begin(), cells.end(), n_past);
    target_.commit(cells, chunk);
    if (draft_adapter_) draft_adapter_->commit(cells);
    if (verifier_adapter_) verifier_adapter_->commit(cells);
  }
  return Status::Ok();
}

Status CatsCycle::head(CatsAdapter* adapter, const ForwardBatch& rows, const float* hidden, int64_t n) {
  logits_.resize(static_cast<size_t>(n) * target_.hparams().n_vocab);
  if (!adapter) return target_.head_logits(hidden, n, logits_.data());
  const int E = target_.hparams().n_embd;
  adapted_.resize(static_cast<size_t>(rows.size()) * E);
  adapter->forward(rows, hidden, adapted_.data());
  return target_.head_logits(adapted_.data(), n, logits_.data());
}

Status CatsCycle::run(int32_t pending, int gamma, int max_nodes, Sampler& sampler, const std::vector<int32_t>& history,
                      CatsCycleResult* out) {
  const ModelHParams& hp = target_.hparams();
  const int E = hp.n_embd, V = hp.n_vocab, N = hp.n_layer;
  const int ldm = options_.cuts.ldm, lsv = options_.cuts.lsv;
  const bool shallow_verify = !options_.cuts.kangaroo;
  const int32_t n_past = target_.n_past();
  *out = CatsCycleResult{};
  TokenTree& tree = out->tree;
  tree.clear();
  const int chain = std::max(0, std::min(gamma, max_nodes));
  out->chain = chain;

  // ---- Stage 1: draft through [0, L_DM), one row per pass ----
  Stopwatch draft_timer;
  h_draft_.resize(static_cast<size_t>(chain + 1) * E);
  std::vector<int32_t> tokens = {pending};              // chain row tokens: pending, d_1, ..
  std::vector<std::vector<int32_t>> alternates(chain);  // extra branches below chain row k
  for (int k = 0; k <= chain; ++k) {
    const ForwardBatch row = ForwardBatch::causal({tokens[k]}, n_past + k);
    SF_RETURN_IF_ERROR(target_.forward_layers(row, 0, ldm, nullptr));
    float* h = h_draft_.data() + static_cast<size_t>(k) * E;
    std::copy_n(target_.hidden(), E, h);
    if (k == chain) {  // d_gamma's row only needs its hidden state (and its adapter K/V)
      if (draft_adapter_) draft_adapter_->forward(row, h, nullptr);
      break;
    }
    SF_RETURN_IF_ERROR(head(draft_adapter_.get(), row, h, 1));
    std::vector<int32_t> top = top_tokens(logits_.data(), V, 1 + options_.extra_branches);
    tree.add(top[0], k - 1, 1.0f);  // node k-1 is chain row k (kRoot == -1 is the pending row)
    tokens.push_back(top[0]);
    alternates[k].assign(top.begin() + 1, top.end());
  }
  out->draft_seconds = draft_timer.elapsed();

  // ---- Stage 2: shallow verification through [L_DM, L_SV), corrections and leaves ----
  Stopwatch shallow_timer;
  const int64_t chain_rows = chain + 1;
  h_final_.resize(static_cast<size_t>(chain_rows) * E);
  if (shallow_verify) {
    const ForwardBatch chain_batch = make_tree_batch(tree, pending, n_past);
    SF_RETURN_IF_ERROR(target_.forward_layers(chain_batch, ldm, lsv, h_draft_.data()));
    std::copy_n(target_.hidden(), static_cast<size_t>(chain_rows) * E, h_final_.data());
    // Rows 0..gamma-1 predict d_1..d_gamma (the adapter also writes row gamma's K/V).
    if (chain > 0) {
      SF_RETURN_IF_ERROR(head(verifier_adapter_.get(), chain_batch, h_final_.data(), chain));
    } else if (verifier_adapter_) {
      verifier_adapter_->forward(chain_batch, h_final_.data(), nullptr);
    }
    for (int i = 0; i < chain; ++i) {
      const int32_t parent = i - 1;
      const int32_t verdict = top_tokens(logits_.data() + static_cast<size_t>(i) * V, V, 1)[0];
      std::vector<int32_t> leaves = alternates[i];
      if (verdict != tokens[i + 1]) {
        leaves.insert(leaves.begin(), verdict);  // the correction first: it is the likelier sibling
        ++out->corrections;
      }
      for (int32_t t : leaves)
        if (tree.size() < max_nodes && tree.find_child(parent, t) < 0) tree.add(t, parent, 0.0f);
    }
  } else {
    std::copy_n(h_draft_.data(), static_cast<size_t>(chain_rows) * E, h_final_.data());
    for (int i = 0; i < chain; ++i)
      for (int32_t t : alternates[i])
        if (tree.size() < max_nodes && tree.find_child(i - 1, t) < 0) tree.add(t, i - 1, 0.0f);
  }
  const ForwardBatch full = make_tree_batch(tree, pending, n_past);
  const int start = shallow_verify ? lsv : ldm;  // layer the final pass starts at
  if (full.size() > chain_rows) {
    // Leaves run [0, start) under the tree mask; they reuse the pinned shallow layers.
    SF_RETURN_IF_ERROR(shallow_pass(batch_rows(full, chain_rows, full.size()), start));
    h_final_.resize(static_cast<size_t>(full.size()) * E);
    std::copy_n(target_.hidden(), static_cast<size_t>(full.size() - chain_rows) * E,
                h_final_.data() + static_cast<size_t>(chain_rows) * E);
  }
  out->shallow_seconds = shallow_timer.elapsed();

  // ---- Stage 3: the final pass over the whole tree from layer `start`, then the walk ----
  Stopwatch final_timer;
  SF_RETURN_IF_ERROR(target_.forward_layers(full, start, N, h_final_.data()));
  row_logits_.resize(static_cast<size_t>(V));
  SF_RETURN_IF_ERROR(target_.begin_head());
  const VerifyResult result = verify_tree(
      tree, V,
      [&](int64_t row) {
        target_.row_logits(row, row_logits_.data());
        return row_logits_.data();
      },
      sampler, history);
  target_.end_head();
  out->accepted = result.accepted;
  out->bonus = result.bonus;
  out->rows_visited = result.rows_visited;
  out->accepted_leaf = !result.accepted.empty() && result.accepted.back() >= chain;
  std::vector<int32_t> cells = {n_past}, committed = {pending};
  for (int32_t node : result.accepted) {
    cells.push_back(n_past + static_cast<int32_t>(tree_row(node)));
    committed.push_back(tree.node(node).token);
  }
  target_.commit(cells, committed);
  if (draft_adapter_) draft_adapter_->commit(cells);
  if (verifier_adapter_) verifier_adapter_->commit(cells);
  out->final_seconds = final_timer.elapsed();
  return Status::Ok();
}

}  // namespace sf
