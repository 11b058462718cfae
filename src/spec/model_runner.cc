#include "spec/model_runner.h"

#include "base/check.h"
#include "base/timer.h"

namespace sf {

ModelRunner::ModelRunner(const Model& model, LayerSource& source, ThreadPool& pool, int n_ctx)
    : model_(model),
      source_(source),
      transformer_(model.hparams(), pool),
      cache_(model.hparams().n_layer, n_ctx, model.hparams().kv_dim()) {}

Status ModelRunner::forward(const ForwardBatch& batch) {
  const ModelHParams& hp = model_.hparams();
  const int64_t n = batch.size();
  SF_CHECK(n > 0);
  for (int32_t t : batch.tokens)
    if (t < 0 || t >= hp.n_vocab)
      return Status::Errorf("token id %d is outside the vocabulary (0..%d)", t, hp.n_vocab - 1);
  Stopwatch timer;
  hidden_.resize(static_cast<size_t>(n) * hp.n_embd);
  hidden_rows_ = n;
  transformer_.embed(model_.weights(), batch.tokens.data(), n, hidden_.data());
  SF_RETURN_IF_ERROR(transformer_.run_layers(source_, model_.weights(), batch, 0, hp.n_layer, cache_, hidden_.data()));
  ++counters_.forward_passes;
  counters_.rows += static_cast<uint64_t>(n);
  counters_.forward_seconds += timer.elapsed();
  return Status::Ok();
}

Status ModelRunner::forward_causal(const std::vector<int32_t>& tokens) {
  if (n_past_ + static_cast<int>(tokens.size()) > cache_.n_ctx())
    return Status::Errorf("sequence of %zu tokens does not fit the context of %d tokens (use --ctx-size)",
                          n_past_ + tokens.size(), cache_.n_ctx());
  SF_RETURN_IF_ERROR(forward(ForwardBatch::causal(tokens, n_past_)));
  n_past_ += static_cast<int>(tokens.size());
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  cache_.set_committed(n_past_);
  return Status::Ok();
}

void ModelRunner::truncate(int n) {
  SF_CHECK(n >= 0 && n <= n_past_);
  n_past_ = n;
  tokens_.resize(static_cast<size_t>(n));
  cache_.set_committed(n);
}

Status ModelRunner::logits_all(float* out) {
  SF_RETURN_IF_ERROR(begin_head());
  transformer_.apply_head(*head_, model_.weights(), hidden_.data(), hidden_rows_, out);
  counters_.head_rows += static_cast<uint64_t>(hidden_rows_);
  end_head();
  return Status::Ok();
}

Status ModelRunner::begin_head() {
  SF_CHECK(head_ == nullptr, "begin_head twice");
  Stopwatch timer;
  SF_ASSIGN_OR_RETURN(head_, source_.acquire_output());
  counters_.forward_seconds += timer.elapsed();
  return Status::Ok();
}

void ModelRunner::row_logits(int64_t row, float* out) {
  SF_CHECK(head_ != nullptr && row >= 0 && row < hidden_rows_);
  Stopwatch timer;
  transformer_.apply_head(*head_, model_.weights(), hidden_.data() + row * model_.hparams().n_embd, 1, out);
  ++counters_.head_rows;
  counters_.forward_seconds += timer.elapsed();
}

void ModelRunner::end_head() {
  SF_CHECK(head_ != nullptr);
  source_.release_output();
  head_ = nullptr;
}

void ModelRunner::commit(const std::vector<int32_t>& cells, const std::vector<int32_t>& tokens) {
  SF_CHECK(n_past_ + static_cast<int>(cells.size()) <= cache_.n_ctx() && tokens.size() == cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    // Cells only move towards lower indices and targets are distinct, so no source is
    // overwritten before it is read.
    SF_CHECK(cells[i] >= n_past_ + static_cast<int>(i) && (i == 0 || cells[i] > cells[i - 1]));
    cache_.move_cell(cells[i], n_past_ + static_cast<int>(i));
  }
  n_past_ += static_cast<int>(cells.size());
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  cache_.set_committed(n_past_);
}

}  // namespace sf
