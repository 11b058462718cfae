// ModelRunner: one model with its KV cache and forward pass, as the speculative core sees
// both the target and a draft model: run a batch (causal or a token tree), read logits of
// chosen rows, then commit the rows that were accepted and forget the rest.
//
// Cells [0, n_past) of the cache hold the committed sequence; a batch writes its rows into
// the cells its ForwardBatch names (by convention n_past onwards). commit() moves the
// accepted rows' cells into place after n_past in one step.
// Not thread-safe.
#pragma once

#include <functional>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/layer_source.h"
#include "model/model.h"
#include "model/transformer.h"

namespace sf {

// A point inside a forward pass where a policy sees the hidden states of every row and may
// drop rows: the later layers then run over the kept rows only (and write only their KV
// cells). Rows are computed independently of which other rows share the batch, so the
// kept rows' results are bit-identical to a pass over the kept rows alone. Users: LEVER's
// early-exit pruning; CATS's shallow verifier and Mirror-SD's token channel read the same
// tap.
struct LayerTap {
  int layer = 0;  // the tap sees the hidden states after layers [0, layer)
  // hidden: [rows.size(), n_embd] f32; rows[i] is the batch row of hidden row i. Leave
  // `keep` empty to keep every row, or fill it with the batch rows to keep (an ascending
  // subset of `rows`).
  std::function<Status(const float* hidden, const std::vector<int64_t>& rows, std::vector<int64_t>* keep)> fn;
};

// Where the time of the last forward pass went, split at its tap.
struct PassTiming {
  int64_t rows = 0;               // rows of the batch
  int64_t rows_after_tap = 0;     // rows the layers after the tap ran over
  double before_tap_seconds = 0;  // layers before the tap (whole pass when there is none)
  double tap_seconds = 0;         // the tap's own work (scoring, compaction)
  double after_tap_seconds = 0;   // layers after the tap
};

struct RunnerCounters {
  uint64_t forward_passes = 0;
  uint64_t rows = 0;
  uint64_t head_rows = 0;
  double forward_seconds = 0;
  // Weight bytes the passes read (the units of every layer they ran, and the LM head once
  // per head acquisition): what CATS's bytes-per-token counts, wherever the weights live.
  uint64_t weight_bytes = 0;
};

class ModelRunner {
 public:
  ModelRunner(const Model& model, LayerSource& source, ThreadPool& pool, int n_ctx);

  const Model& model() const { return model_; }
  const ModelHParams& hparams() const { return model_.hparams(); }
  int n_ctx() const { return cache_.n_ctx(); }
  int n_past() const { return n_past_; }
  const RunnerCounters& counters() const { return counters_; }
  // The pool later passes compute on (Transformer::set_pool). Set only between passes.
  void set_pool(ThreadPool& pool) { transformer_.set_pool(pool); }

  // Forgets everything (n_past = 0).
  void reset() { truncate(0); }
  // Keeps only the first n committed cells.
  void truncate(int n);
  // The tokens whose K/V the committed cells hold, in order (size n_past()).
  const std::vector<int32_t>& committed_tokens() const { return tokens_; }

  // Runs all layers over the batch; its hidden states stay available for logits(). With a
  // tap, the layers from tap->layer on run over the rows the tap keeps.
  Status forward(const ForwardBatch& batch, const LayerTap* tap = nullptr);
  // Whether a row of the last forward ran every layer (false for rows a tap dropped).
  bool has_row(int64_t row) const {
    return row >= 0 && row < static_cast<int64_t>(row_index_.size()) && row_index_[row] >= 0;
  }
  const PassTiming& last_pass() const { return last_pass_; }

  // A partial pass: layers [begin, end) over the batch, starting from hidden_in
  // ([batch.size(), n_embd], the hidden states after layer `begin` of these rows), or from
  // the token embeddings when begin == 0 (hidden_in may then be null). Writes the rows'
  // K/V of those layers only; the output is hidden() and, when end == n_layer, the rows'
  // logits as after forward(). Running [0, a) then [a, b) then [b, n_layer) over the same
  // rows (or over other row groupings of one tree) is bit-identical to one full pass,
  // because rows are computed independently. Counts as a forward pass only when end ==
  // n_layer (its time and weight bytes always count).
  Status forward_layers(const ForwardBatch& batch, int begin, int end, const float* hidden_in);
  // Hidden states of the last pass's rows that ran every layer it ran: [rows, n_embd].
  const float* hidden() const { return hidden_.data(); }
  // Final norm + LM head over arbitrary hidden rows [n, n_embd] (the early-exit head):
  // logits [n, n_vocab]. Acquires and releases the head itself.
  Status head_logits(const float* hidden, int64_t n, float* out);
  // Convenience: forward a causal batch of tokens at n_past and commit all of them.
  Status forward_causal(const std::vector<int32_t>& tokens);

  // Logits of rows of the last forward (batch row numbers; dropped rows are an error): all
  // of them (no tap may have dropped rows), or one at a time between
  // begin_head()/end_head() (the head is acquired once, so a streamed head is read once).
  Status logits_all(float* out);
  Status begin_head();
  void row_logits(int64_t row, float* out);
  void end_head();

  // Keeps the given cells (in order) as the sequence continuation: cell cells[i] moves to
  // n_past + i, then n_past grows by cells.size(). tokens[i] is the token in cells[i].
  void commit(const std::vector<int32_t>& cells, const std::vector<int32_t>& tokens);
  // Moves uncommitted cells (ascending, all at or after n_past + their index) to n_past,
  // n_past + 1, ... in order, so work drafted beyond the committed sequence (EdgeLLM's
  // provisional tokens) survives a commit. They stay uncommitted.
  void pack_uncommitted(const std::vector<int32_t>& cells);

 private:
  const Model& model_;
  LayerSource& source_;
  Transformer transformer_;
  KvCache cache_;
  std::vector<float> hidden_;  // [rows of the last forward that ran every layer, n_embd]
  int64_t hidden_rows_ = 0;
  std::vector<int64_t> row_index_;  // batch row -> row of hidden_ (-1: dropped by a tap)
  PassTiming last_pass_;
  const WeightMatrix* head_ = nullptr;
  int n_past_ = 0;
  std::vector<int32_t> tokens_;  // committed tokens, one per cell < n_past_
  RunnerCounters counters_;
};

}  // namespace sf
