#include "spec/model_runner.h"

#include "base/check.h"
#include "base/timer.h"

namespace sf {

ModelRunner::ModelRunner(const Model& model, LayerSource& source, ThreadPool& pool, int n_ctx)
    : model_(model),
      source_(source),
      transformer_(model.hparams(), pool),
      cache_(model.hparams().n_layer, n_ctx, model.hparams().n_head_kv, model.hparams().head_dim) {}

namespace {

// The rows `keep` (ascending batch rows) of a batch, with their cells and mask rows.
ForwardBatch select_rows(const ForwardBatch& b, const std::vector<int64_t>& keep) {
  ForwardBatch out;
  out.n_kv = b.n_kv;
  out.mask.reserve(keep.size() * static_cast<size_t>(b.n_kv));
  for (int64_t r : keep) {
    out.tokens.push_back(b.tokens[r]);
    out.positions.push_back(b.positions[r]);
    out.kv_cells.push_back(b.kv_cells[r]);
    out.mask.insert(out.mask.end(), b.mask.begin() + r * b.n_kv, b.mask.begin() + (r + 1) * b.n_kv);
  }
  return out;
}

}  // namespace

Status ModelRunner::forward(const ForwardBatch& batch, const LayerTap* tap) {
  const ModelHParams& hp = model_.hparams();
  const int64_t n = batch.size();
  SF_CHECK(n > 0);
  for (int32_t t : batch.tokens)
    if (t < 0 || t >= hp.n_vocab)
      return Status::Errorf("token id %d is outside the vocabulary (0..%d)", t, hp.n_vocab - 1);
  Stopwatch timer;
  last_pass_ = PassTiming{n, n, 0, 0, 0};
  hidden_.resize(static_cast<size_t>(n) * hp.n_embd);
  hidden_rows_ = n;
  row_index_.resize(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) row_index_[r] = r;
  transformer_.embed(model_.weights(), batch.tokens.data(), n, hidden_.data());
  const int split = tap ? tap->layer : hp.n_layer;
  SF_CHECK(split >= 0 && split <= hp.n_layer, "tap at layer %d of %d", split, hp.n_layer);
  SF_RETURN_IF_ERROR(transformer_.run_layers(source_, model_.weights(), batch, 0, split, cache_, hidden_.data()));
  last_pass_.before_tap_seconds = timer.elapsed();
  if (tap) {
    Stopwatch tap_timer;
    std::vector<int64_t> rows(static_cast<size_t>(n)), keep;
    for (int64_t r = 0; r < n; ++r) rows[r] = r;
    SF_RETURN_IF_ERROR(tap->fn(hidden_.data(), rows, &keep));
    ForwardBatch kept;
    if (!keep.empty() && static_cast<int64_t>(keep.size()) < n) {
      for (size_t i = 0; i < keep.size(); ++i)
        SF_CHECK(keep[i] >= 0 && keep[i] < n && (i == 0 || keep[i] > keep[i - 1]), "tap kept an invalid row list");
      std::fill(row_index_.begin(), row_index_.end(), -1);
      const int E = hp.n_embd;
      for (size_t i = 0; i < keep.size(); ++i) {
        row_index_[keep[i]] = static_cast<int64_t>(i);
        // Ascending rows: a row only moves towards the front, over rows already copied.
        if (keep[i] != static_cast<int64_t>(i))
          std::copy_n(hidden_.data() + keep[i] * E, E, hidden_.data() + static_cast<int64_t>(i) * E);
      }
      hidden_rows_ = static_cast<int64_t>(keep.size());
      kept = select_rows(batch, keep);
    }
    last_pass_.rows_after_tap = hidden_rows_;
    last_pass_.tap_seconds = tap_timer.elapsed();
    Stopwatch after_timer;
    SF_RETURN_IF_ERROR(transformer_.run_layers(source_, model_.weights(), kept.size() > 0 ? kept : batch, split,
                                               hp.n_layer, cache_, hidden_.data()));
    last_pass_.after_tap_seconds = after_timer.elapsed();
  }
  ++counters_.forward_passes;
  counters_.rows += static_cast<uint64_t>(n);
  counters_.forward_seconds += timer.elapsed();
  for (int l = 0; l < hp.n_layer; ++l) counters_.weight_bytes += model_.weights().unit_bytes(l);
  return Status::Ok();
}

Status ModelRunner::forward_layers(const ForwardBatch& batch, int begin, int end, const float* hidden_in) {
  const ModelHParams& hp = model_.hparams();
  const int64_t n = batch.size();
  SF_CHECK(n > 0 && begin >= 0 && begin < end && end <= hp.n_layer, "layers [%d, %d) of %d", begin, end, hp.n_layer);
  SF_CHECK(begin == 0 || hidden_in != nullptr, "a pass from layer %d needs its input hidden states", begin);
  for (int32_t t : batch.tokens)
    if (t < 0 || t >= hp.n_vocab)
      return Status::Errorf("token id %d is outside the vocabulary (0..%d)", t, hp.n_vocab - 1);
  Stopwatch timer;
  last_pass_ = PassTiming{n, n, 0, 0, 0};
  const size_t elems = static_cast<size_t>(n) * hp.n_embd;
  // hidden_in may point into hidden_ (chained ranges): copy through a temporary only then.
  if (begin == 0) {
    hidden_.resize(elems);
    transformer_.embed(model_.weights(), batch.tokens.data(), n, hidden_.data());
  } else if (hidden_in >= hidden_.data() && hidden_in < hidden_.data() + hidden_.size()) {
    std::vector<float> in(hidden_in, hidden_in + elems);
    hidden_ = std::move(in);
  } else {
    hidden_.assign(hidden_in, hidden_in + elems);
  }
  hidden_rows_ = n;
  row_index_.resize(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) row_index_[r] = r;
  SF_RETURN_IF_ERROR(transformer_.run_layers(source_, model_.weights(), batch, begin, end, cache_, hidden_.data()));
  last_pass_.before_tap_seconds = timer.elapsed();
  if (end == hp.n_layer) ++counters_.forward_passes;
  counters_.rows += static_cast<uint64_t>(n);
  counters_.forward_seconds += timer.elapsed();
  for (int l = begin; l < end; ++l) counters_.weight_bytes += model_.weights().unit_bytes(l);
  return Status::Ok();
}

Status ModelRunner::head_logits(const float* hidden, int64_t n, float* out) {
  SF_RETURN_IF_ERROR(begin_head());
  Stopwatch timer;
  transformer_.apply_head(*head_, model_.weights(), hidden, n, out);
  counters_.head_rows += static_cast<uint64_t>(n);
  counters_.forward_seconds += timer.elapsed();
  end_head();
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
  SF_CHECK(hidden_rows_ == static_cast<int64_t>(row_index_.size()), "logits_all after a tap dropped rows");
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
  counters_.weight_bytes += model_.weights().unit_bytes(model_.weights().head_unit());
  return Status::Ok();
}

void ModelRunner::row_logits(int64_t row, float* out) {
  SF_CHECK(head_ != nullptr && has_row(row), "logits of row %lld, which did not run every layer",
           static_cast<long long>(row));
  Stopwatch timer;
  transformer_.apply_head(*head_, model_.weights(), hidden_.data() + row_index_[row] * model_.hparams().n_embd, 1, out);
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

void ModelRunner::pack_uncommitted(const std::vector<int32_t>& cells) {
  SF_CHECK(n_past_ + static_cast<int>(cells.size()) <= cache_.n_ctx());
  for (size_t i = 0; i < cells.size(); ++i) {
    SF_CHECK(cells[i] >= n_past_ + static_cast<int>(i) && cells[i] < cache_.n_ctx() &&
             (i == 0 || cells[i] > cells[i - 1]));
    cache_.move_cell(cells[i], n_past_ + static_cast<int>(i));
  }
}

}  // namespace sf
