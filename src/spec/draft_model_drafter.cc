#include "spec/draft_model_drafter.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "base/timer.h"
#include "ops/activation.h"
#include "ops/top_k.h"

namespace sf {

namespace {

// The k most likely tokens (ties to the lower id, like argmax) with their softmax
// probabilities. A draft step of a tiny model (stories260K's draft: 0.02 ms) spent a third
// of its time in a partial sort and double-precision exponentials, then (a sorted list of
// the best k so far, one insertion at a time) ~4.6 us in the selection; top_k_indices
// (ops/top_k.h) picks the same tokens in well under a microsecond.
std::vector<TokenProb> greedy_top_tokens(const float* logits, int n_vocab, int k) {
  thread_local std::vector<int32_t> top;
  top_k_indices(logits, n_vocab, k, &top);
  const float max = logits[top[0]];
  const double sum = exp_sum_shifted(logits, n_vocab, max);
  std::vector<TokenProb> probs;
  probs.reserve(top.size());
  for (int32_t id : top) probs.push_back({id, static_cast<float>(std::exp(logits[id] - max) / sum)});
  return probs;
}

}  // namespace

Result<std::unique_ptr<DraftModelDrafter>> DraftModelDrafter::create(const std::string& path,
                                                                     const Tokenizer& target_vocab, int target_n_vocab,
                                                                     ThreadPool& pool, int n_ctx) {
  std::unique_ptr<DraftModelDrafter> d(new DraftModelDrafter());
  SF_ASSIGN_OR_RETURN(d->model_, Model::load(path));
  SF_ASSIGN_OR_RETURN(Tokenizer draft_vocab, Tokenizer::from_gguf(d->model_->file()));
  if (!draft_vocab.same_vocabulary(target_vocab) || d->model_->hparams().n_vocab != target_n_vocab)
    return Status::Errorf(
        "%s: the draft model's vocabulary (%d tokens) differs from the target's (%d tokens); speculative decoding "
        "needs a draft with the same tokenizer",
        path.c_str(), d->model_->hparams().n_vocab, target_n_vocab);
  d->source_ = std::make_unique<ResidentLayerSource>(d->model_->weights());
  d->gated_ = std::make_unique<GatedLayerSource>(*d->source_);
  d->runner_ = std::make_unique<ModelRunner>(*d->model_, *d->gated_, pool, n_ctx);
  d->home_pool_ = &pool;
  d->logits_.resize(target_n_vocab);
  return d;
}

std::unique_ptr<DraftModelDrafter> DraftModelDrafter::fork(ThreadPool& pool, int n_ctx) const {
  std::unique_ptr<DraftModelDrafter> d(new DraftModelDrafter());
  d->model_ = model_;
  d->source_ = std::make_unique<ResidentLayerSource>(d->model_->weights());
  d->gated_ = std::make_unique<GatedLayerSource>(*d->source_);
  d->runner_ = std::make_unique<ModelRunner>(*d->model_, *d->gated_, pool, n_ctx);
  d->home_pool_ = &pool;
  d->logits_.resize(logits_.size());
  return d;
}

void DraftModelDrafter::reset(const std::vector<int32_t>& prompt) {
  runner_->reset();
  pending_ = prompt;
  carry_pending_ = false;
}

Status DraftModelDrafter::begin_cycle(const std::vector<int32_t>& history, const SamplingParams& sampling,
                                      const Sampler& draft_sampler) {
  history_ = &history;
  sampling_ = sampling;
  draft_sampler_ = &draft_sampler;
  if (carry_pending_) {
    // The root and the carried nodes were drafted ahead (commit_carry).
    carry_pending_ = false;
    node_cell_ = std::move(carry_cells_);
    root_drafted_ = true;
    next_cell_ = runner_->n_past();
    for (int32_t cell : node_cell_) next_cell_ = std::max(next_cell_, cell + 1);
    return Status::Ok();
  }
  SF_CHECK(!pending_.empty(), "the draft has no pending token to continue from");
  node_cell_.clear();
  root_drafted_ = false;
  next_cell_ = runner_->n_past() + static_cast<int32_t>(pending_.size());
  return Status::Ok();
}

NodeDistribution DraftModelDrafter::distribution(const TokenTree& tree, int32_t node, const float* logits) const {
  const int n_vocab = model_->hparams().n_vocab;
  NodeDistribution d;
  if (sampling_.greedy()) {
    d.probs = greedy_top_tokens(logits, n_vocab, kGreedyCandidates);
    return d;
  }
  // Penalties see the path below the root, as the target's sampler will at that row.
  std::vector<int32_t> path_history = *history_;
  if (node != TokenTree::kRoot)
    for (int32_t n : tree.path_to(node)) path_history.push_back(tree.node(n).token);
  d.probs = draft_sampler_->distribution(logits, n_vocab, path_history);
  return d;
}

Status DraftModelDrafter::draft_root(std::vector<NodeDistribution>* out) {
  // Catch up with the committed sequence; its last token is the tree's root.
  Stopwatch catch_up;
  SF_RETURN_IF_ERROR(runner_->forward_causal(pending_));
  SF_RETURN_IF_ERROR(runner_->begin_head());
  runner_->row_logits(static_cast<int64_t>(pending_.size()) - 1, logits_.data());
  runner_->end_head();
  draft_counters_.catch_up_tokens += pending_.size();
  draft_counters_.catch_up_seconds += catch_up.elapsed();
  pending_.clear();
  root_drafted_ = true;
  next_cell_ = runner_->n_past();
  out->push_back(distribution(TokenTree(), TokenTree::kRoot, logits_.data()));
  return Status::Ok();
}

Status DraftModelDrafter::draft(const TokenTree& tree, const std::vector<int32_t>& nodes,
                                std::vector<NodeDistribution>* out) {
  out->clear();
  if (nodes.empty()) return Status::Ok();
  Stopwatch timer;
  std::vector<int32_t> rows = nodes;
  if (rows.front() == TokenTree::kRoot) {
    SF_CHECK(!root_drafted_, "the root is drafted once per cycle");
    SF_RETURN_IF_ERROR(draft_root(out));
    rows.erase(rows.begin());
    ++draft_counters_.passes;
    ++draft_counters_.rows;
  }
  SF_CHECK(root_drafted_ || rows.empty(), "a node was drafted before the root");
  const int32_t n_past = runner_->n_past();  // the root is cell n_past - 1
  if (!rows.empty() && runner_->n_ctx() - next_cell_ >= static_cast<int32_t>(rows.size())) {
    node_cell_.resize(tree.size(), -1);
    ForwardBatch b;
    b.n_kv = next_cell_ + static_cast<int32_t>(rows.size());
    b.mask.assign(rows.size() * static_cast<size_t>(b.n_kv), 0);
    for (size_t r = 0; r < rows.size(); ++r) {
      const int32_t node = rows[r];
      SF_CHECK(node >= 0 && node < tree.size() && node_cell_[node] < 0, "node %d drafted twice or unknown", node);
      const int32_t parent = tree.node(node).parent;
      SF_CHECK(parent == TokenTree::kRoot || node_cell_[parent] >= 0, "node %d drafted before its parent", node);
      node_cell_[node] = next_cell_ + static_cast<int32_t>(r);
      b.tokens.push_back(tree.node(node).token);
      b.positions.push_back(n_past - 1 + tree.node(node).depth);
      b.kv_cells.push_back(node_cell_[node]);
      uint8_t* m = b.mask.data() + r * b.n_kv;
      for (int32_t c = 0; c < n_past; ++c) m[c] = 1;
      for (int32_t a = node; a != TokenTree::kRoot; a = tree.node(a).parent) m[node_cell_[a]] = 1;
    }
    next_cell_ += static_cast<int32_t>(rows.size());
    Status st = runner_->forward(b);
    if (st.ok()) st = runner_->begin_head();
    if (!st.ok()) {
      // Not drafted after all (e.g. a background draft abandoned at its gate): the nodes
      // may be drafted again and their cells reused.
      for (int32_t node : rows) node_cell_[node] = -1;
      next_cell_ -= static_cast<int32_t>(rows.size());
      return st;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      runner_->row_logits(static_cast<int64_t>(r), logits_.data());
      out->push_back(distribution(tree, rows[r], logits_.data()));
    }
    runner_->end_head();
    ++draft_counters_.passes;
    draft_counters_.rows += rows.size();
  }
  draft_counters_.seconds += timer.elapsed();
  return Status::Ok();
}

void DraftModelDrafter::commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) {
  std::vector<int32_t> cells, tokens;
  size_t i = 0;
  // The accepted path's prefix that the draft ran keeps its cells; the rest is pending.
  // (If the root was never drafted, pending_ still holds the whole catch-up.)
  if (root_drafted_) {
    for (; i < accepted.size() && accepted[i] < static_cast<int32_t>(node_cell_.size()) && node_cell_[accepted[i]] >= 0;
         ++i) {
      cells.push_back(node_cell_[accepted[i]]);
      tokens.push_back(tree.node(accepted[i]).token);
    }
    runner_->commit(cells, tokens);
  }
  for (; i < accepted.size(); ++i) pending_.push_back(tree.node(accepted[i]).token);
  pending_.push_back(bonus);
}

bool DraftModelDrafter::drafted(int32_t node) const {
  if (node == TokenTree::kRoot) return root_drafted_;
  return node >= 0 && node < static_cast<int32_t>(node_cell_.size()) && node_cell_[node] >= 0;
}

bool DraftModelDrafter::commit_carry(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus_node,
                                     const TokenTree& next, const std::vector<int32_t>& old_of_new) {
  // Everything on the committed path, the bonus node included, must have draft cells.
  if (!root_drafted_ || !drafted(bonus_node)) return false;
  const int32_t last = accepted.empty() ? TokenTree::kRoot : accepted.back();
  if (tree.node(bonus_node).parent != last) return false;
  std::vector<int32_t> cells, tokens;
  for (int32_t node : accepted) {
    if (!drafted(node)) return false;
    cells.push_back(node_cell_[node]);
    tokens.push_back(tree.node(node).token);
  }
  cells.push_back(node_cell_[bonus_node]);
  tokens.push_back(tree.node(bonus_node).token);
  // Drafted nodes below the bonus node, in cell order (which is drafting order).
  std::vector<std::pair<int32_t, int32_t>> carried;  // (old cell, node of `next`)
  for (size_t i = 0; i < old_of_new.size(); ++i)
    if (drafted(old_of_new[i])) carried.push_back({node_cell_[old_of_new[i]], static_cast<int32_t>(i)});
  std::sort(carried.begin(), carried.end());
  runner_->commit(cells, tokens);
  std::vector<int32_t> carried_cells;
  for (const auto& c : carried) carried_cells.push_back(c.first);
  runner_->pack_uncommitted(carried_cells);
  carry_cells_.assign(static_cast<size_t>(next.size()), -1);
  for (size_t j = 0; j < carried.size(); ++j)
    carry_cells_[carried[j].second] = runner_->n_past() + static_cast<int32_t>(j);
  pending_.clear();
  carry_pending_ = true;
  return true;
}

}  // namespace sf
