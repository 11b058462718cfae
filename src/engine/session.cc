#include "engine/session.h"

#include <algorithm>

#include "base/log.h"
#include "base/memory_usage.h"
#include "base/timer.h"

namespace sf {

Session::Session(std::unique_ptr<Model> model, std::unique_ptr<Tokenizer> tokenizer, const SessionOptions& options,
                 int n_ctx)
    : options_(options),
      model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      pool_(options.n_threads),
      cache_(model_->hparams().n_layer, n_ctx, model_->hparams().kv_dim()),
      transformer_(model_->hparams(), pool_) {}

Result<std::unique_ptr<Session>> Session::create(const SessionOptions& options) {
  Stopwatch load_timer;
  if (options.max_batch < 1) return Status::Error("max batch must be at least 1");
  if (options.stream_buffers < 1) return Status::Error("at least one stream buffer is needed");
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::open(options.model_path));
  SF_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(model->file()));
  const ModelHParams& hp = model->hparams();
  if (tok.n_vocab() > hp.n_vocab)
    return Status::Errorf("%s: tokenizer has %d tokens but the embedding has only %d rows",
                          options.model_path.c_str(), tok.n_vocab(), hp.n_vocab);
  const int n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(hp.n_ctx_train, 4096);

  // Plan what stays in DRAM, then read exactly that.
  const uint64_t kv_bytes = KvCache::bytes_for(hp.n_layer, n_ctx, hp.kv_dim());
  const uint64_t scratch = Transformer::scratch_bytes(hp, options.max_batch) +
                           static_cast<uint64_t>(options.max_batch) * hp.n_embd * sizeof(float) +
                           static_cast<uint64_t>(hp.n_vocab) * sizeof(float);
  SF_ASSIGN_OR_RETURN(ResidencyPlan plan,
                      plan_residency(model->weights(), kv_bytes, scratch, options.mem_budget, options.stream_buffers));
  SF_RETURN_IF_ERROR(model->mutable_weights().load_units(plan.resident));

  auto session = std::unique_ptr<Session>(
      new Session(std::move(model), std::make_unique<Tokenizer>(std::move(tok)), options, n_ctx));
  session->plan_ = plan;
  if (plan.streams()) {
    StreamerOptions so;
    so.emulated_bandwidth = options.io_bandwidth;
    so.io = options.io;
    SF_ASSIGN_OR_RETURN(session->streamer_, LayerStreamer::create(session->model_->weights(), plan, so));
    session->source_ = session->streamer_.get();
    SF_LOG_INFO("streaming: %s; I/O backend %s%s%s", plan.describe().c_str(), session->streamer_->backend_name(),
                session->streamer_->direct_io() ? " (O_DIRECT)" : " (buffered + DONTNEED: O_DIRECT refused)",
                options.io_bandwidth > 0 ? ", bandwidth EMULATED" : "");
  } else {
    session->resident_source_ = std::make_unique<ResidentLayerSource>(session->model_->weights());
    session->source_ = session->resident_source_.get();
  }
  session->load_seconds_ = load_timer.elapsed();
  return session;
}

SessionCounters Session::counters() const {
  SessionCounters c = counters_;
  if (streamer_) c.stream = streamer_->stats();
  return c;
}

Result<std::vector<int32_t>> Session::tokenize(const std::string& text, bool parse_special) const {
  return tokenizer_->encode(text, /*add_special=*/true, parse_special);
}

Status Session::evaluate_chunk(const std::vector<int32_t>& tokens, bool want_logits, bool all_rows, float* logits) {
  const ModelHParams& hp = model_->hparams();
  const int64_t n = static_cast<int64_t>(tokens.size());
  Stopwatch timer;
  ForwardBatch batch = ForwardBatch::causal(tokens, n_past_);
  hidden_.resize(static_cast<size_t>(n) * hp.n_embd);
  transformer_.embed(model_->weights(), tokens.data(), n, hidden_.data());
  SF_RETURN_IF_ERROR(
      transformer_.run_layers(*source_, model_->weights(), batch, 0, hp.n_layer, cache_, hidden_.data()));
  n_past_ += static_cast<int>(n);
  cache_.set_committed(n_past_);
  if (want_logits) {
    const int64_t rows = all_rows ? n : 1;
    const float* first = hidden_.data() + (all_rows ? 0 : (n - 1) * hp.n_embd);
    SF_RETURN_IF_ERROR(transformer_.logits(*source_, model_->weights(), first, rows, logits));
  }
  ++counters_.forward_passes;
  counters_.rows_evaluated += static_cast<uint64_t>(n);
  counters_.forward_seconds += timer.elapsed();
  return Status::Ok();
}

Status Session::evaluate(const std::vector<int32_t>& tokens, bool all_rows, std::vector<float>* logits) {
  const ModelHParams& hp = model_->hparams();
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return Status::Error("nothing to evaluate (empty token list)");
  if (n_past_ + n > cache_.n_ctx())
    return Status::Errorf("sequence of %lld tokens does not fit the context of %d tokens (use --ctx-size)",
                          static_cast<long long>(n_past_ + n), cache_.n_ctx());
  for (int32_t t : tokens)
    if (t < 0 || t >= hp.n_vocab)
      return Status::Errorf("token id %d is outside the vocabulary (0..%d)", t, hp.n_vocab - 1);
  if (logits) logits->resize(static_cast<size_t>(all_rows ? n : 1) * hp.n_vocab);
  for (int64_t begin = 0; begin < n; begin += options_.max_batch) {
    const int64_t end = std::min<int64_t>(n, begin + options_.max_batch);
    const std::vector<int32_t> chunk(tokens.begin() + begin, tokens.begin() + end);
    const bool last = end == n;
    const bool want = logits && (all_rows || last);
    float* out = !want ? nullptr : all_rows ? logits->data() + begin * hp.n_vocab : logits->data();
    SF_RETURN_IF_ERROR(evaluate_chunk(chunk, want, all_rows, out));
  }
  return Status::Ok();
}

Result<GenerationStats> Session::generate(const std::vector<int32_t>& prompt, int n_predict,
                                          const SamplingParams& sampling, bool ignore_eos,
                                          const std::function<bool(int32_t, const std::string&)>& on_token) {
  GenerationStats stats;
  stats.load_seconds = load_seconds_;
  stats.prompt_tokens = static_cast<int>(prompt.size());
  if (prompt.empty()) return Status::Error("the prompt is empty (no tokens to start from)");
  if (static_cast<int>(prompt.size()) > cache_.n_ctx())
    return Status::Errorf("the prompt has %zu tokens but the context holds %d (use --ctx-size)", prompt.size(),
                          cache_.n_ctx());
  reset();
  const SessionCounters before = counters();
  Sampler sampler(sampling);
  StreamingDecoder decoder(*tokenizer_);
  std::vector<int32_t> history = prompt;
  std::vector<float> logits;

  Stopwatch prefill_timer;
  SF_RETURN_IF_ERROR(evaluate(prompt, false, &logits));
  stats.prefill_seconds = prefill_timer.elapsed();

  Stopwatch decode_timer;
  const int n_vocab = model_->hparams().n_vocab;
  for (int i = 0; i < n_predict; ++i) {
    const int32_t next = sampler.sample(logits.data(), n_vocab, history);
    if (!ignore_eos && tokenizer_->is_eog(next)) break;
    history.push_back(next);
    ++stats.generated_tokens;
    if (!on_token(next, decoder.push(next))) break;
    if (i + 1 == n_predict) break;
    if (n_past_ + 1 > cache_.n_ctx()) {
      SF_LOG_WARN("context of %d tokens is full; stopping generation", cache_.n_ctx());
      break;
    }
    SF_RETURN_IF_ERROR(evaluate({next}, false, &logits));
  }
  const std::string tail = decoder.flush();
  if (!tail.empty()) on_token(-1, tail);
  stats.decode_seconds = decode_timer.elapsed();
  stats.peak_rss_bytes = peak_rss_bytes();
  const SessionCounters after = counters();
  stats.counters.forward_passes = after.forward_passes - before.forward_passes;
  stats.counters.rows_evaluated = after.rows_evaluated - before.rows_evaluated;
  stats.counters.forward_seconds = after.forward_seconds - before.forward_seconds;
  stats.counters.stream.bytes_read = after.stream.bytes_read - before.stream.bytes_read;
  stats.counters.stream.units_read = after.stream.units_read - before.stream.units_read;
  stats.counters.stream.io_seconds = after.stream.io_seconds - before.stream.io_seconds;
  stats.counters.stream.io_stall_seconds = after.stream.io_stall_seconds - before.stream.io_stall_seconds;
  stats.counters.stream.restarts = after.stream.restarts - before.stream.restarts;
  return stats;
}

}  // namespace sf
