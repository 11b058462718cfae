#include "spec/draft_model_drafter.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "spec/tree_batch.h"

namespace sf {

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
  d->runner_ = std::make_unique<ModelRunner>(*d->model_, *d->source_, pool, n_ctx);
  d->logits_.resize(target_n_vocab);
  return d;
}

std::unique_ptr<DraftModelDrafter> DraftModelDrafter::fork(ThreadPool& pool, int n_ctx) const {
  std::unique_ptr<DraftModelDrafter> d(new DraftModelDrafter());
  d->model_ = model_;
  d->source_ = std::make_unique<ResidentLayerSource>(d->model_->weights());
  d->runner_ = std::make_unique<ModelRunner>(*d->model_, *d->source_, pool, n_ctx);
  d->logits_.resize(logits_.size());
  return d;
}

void DraftModelDrafter::reset(const std::vector<int32_t>& prompt) {
  runner_->reset();
  pending_ = prompt;
}

void DraftModelDrafter::expand(const float* logits, int32_t parent, int width, const SamplingParams& sampling,
                               Sampler& draft_sampler, const std::vector<int32_t>& history, TokenTree* tree) {
  const int n_vocab = model_->hparams().n_vocab;
  if (sampling.greedy()) {
    // Top-w tokens; their softmax probabilities are kept for confidence-based policies.
    std::vector<int32_t> ids(n_vocab);
    for (int i = 0; i < n_vocab; ++i) ids[i] = i;
    const int w = std::min(width, n_vocab);
    std::partial_sort(ids.begin(), ids.begin() + w, ids.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    const float max = logits[ids[0]];
    double sum = 0;
    for (int i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - max));
    for (int i = 0; i < w; ++i)
      tree->add(ids[i], parent, static_cast<float>(std::exp(static_cast<double>(logits[ids[i]] - max)) / sum));
    return;
  }
  std::vector<int32_t> path_history = history;
  if (parent != TokenTree::kRoot)
    for (int32_t n : tree->path_to(parent)) path_history.push_back(tree->node(n).token);
  std::vector<TokenProb> q = draft_sampler.distribution(logits, n_vocab, path_history);
  for (int i = 0; i < width; ++i) {
    const int32_t token = draft_sampler.draw(q);
    int32_t child = tree->find_child(parent, token);
    if (child < 0) {
      float p = 0;
      for (const auto& tp : q)
        if (tp.id == token) p = tp.p;
      child = tree->add(token, parent, p);
    }
    tree->proposals(parent).push_back(child);
  }
  tree->draft_dist(parent) = std::move(q);
}

Status DraftModelDrafter::propose(TreePolicy& policy, const SamplingParams& sampling, Sampler& draft_sampler,
                                  const std::vector<int32_t>& history, TokenTree* tree) {
  tree->clear();
  node_cell_.clear();
  const int root_children = policy.children(*tree, TokenTree::kRoot);
  if (root_children <= 0) return Status::Ok();
  SF_CHECK(!pending_.empty(), "the draft has no pending token to continue from");
  // Catch up with the committed sequence; its last token is the tree's root.
  SF_RETURN_IF_ERROR(runner_->forward_causal(pending_));
  SF_RETURN_IF_ERROR(runner_->begin_head());
  runner_->row_logits(static_cast<int64_t>(pending_.size()) - 1, logits_.data());
  runner_->end_head();
  pending_.clear();
  expand(logits_.data(), TokenTree::kRoot, root_children, sampling, draft_sampler, history, tree);

  const int32_t n_past = runner_->n_past();  // the root is cell n_past - 1
  int32_t next_cell = n_past;
  for (int32_t depth = 1;; ++depth) {
    // This level's nodes that the policy wants to expand; they need the draft's logits.
    std::vector<int32_t> frontier;
    std::vector<int> widths;
    for (int32_t i = 0; i < tree->size(); ++i) {
      if (tree->node(i).depth != depth) continue;
      const int w = policy.children(*tree, i);
      if (w > 0) {
        frontier.push_back(i);
        widths.push_back(w);
      }
    }
    if (frontier.empty()) break;
    if (runner_->n_ctx() - next_cell < static_cast<int32_t>(frontier.size())) break;  // draft context full
    node_cell_.resize(tree->size(), -1);
    ForwardBatch b;
    b.n_kv = next_cell + static_cast<int32_t>(frontier.size());
    b.mask.assign(frontier.size() * static_cast<size_t>(b.n_kv), 0);
    for (size_t r = 0; r < frontier.size(); ++r) {
      const int32_t node = frontier[r];
      node_cell_[node] = next_cell + static_cast<int32_t>(r);
      b.tokens.push_back(tree->node(node).token);
      b.positions.push_back(n_past - 1 + tree->node(node).depth);
      b.kv_cells.push_back(node_cell_[node]);
      uint8_t* m = b.mask.data() + r * b.n_kv;
      for (int32_t c = 0; c < n_past; ++c) m[c] = 1;
      for (int32_t a = node; a != TokenTree::kRoot; a = tree->node(a).parent) m[node_cell_[a]] = 1;
    }
    next_cell += static_cast<int32_t>(frontier.size());
    SF_RETURN_IF_ERROR(runner_->forward(b));
    SF_RETURN_IF_ERROR(runner_->begin_head());
    for (size_t r = 0; r < frontier.size(); ++r) {
      runner_->row_logits(static_cast<int64_t>(r), logits_.data());
      expand(logits_.data(), frontier[r], widths[r], sampling, draft_sampler, history, tree);
    }
    runner_->end_head();
  }
  node_cell_.resize(tree->size(), -1);
  return Status::Ok();
}

void DraftModelDrafter::commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) {
  std::vector<int32_t> cells, tokens;
  size_t i = 0;
  for (; i < accepted.size() && accepted[i] < static_cast<int32_t>(node_cell_.size()) && node_cell_[accepted[i]] >= 0;
       ++i) {
    cells.push_back(node_cell_[accepted[i]]);
    tokens.push_back(tree.node(accepted[i]).token);
  }
  runner_->commit(cells, tokens);
  for (; i < accepted.size(); ++i) pending_.push_back(tree.node(accepted[i]).token);
  pending_.push_back(bonus);
}

}  // namespace sf
