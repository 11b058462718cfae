#include "engine/session.h"

#include <algorithm>

#include "base/log.h"
#include "base/memory_usage.h"
#include "base/timer.h"

namespace sf {

Session::Session(std::unique_ptr<Model> model, std::unique_ptr<Tokenizer> tokenizer, int n_threads, int n_ctx)
    : model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      pool_(n_threads),
      cache_(model_->hparams().n_layer, n_ctx, model_->hparams().kv_dim()),
      transformer_(model_->hparams(), pool_) {}

Result<std::unique_ptr<Session>> Session::create(const SessionOptions& options) {
  Stopwatch load_timer;
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::load(options.model_path));
  SF_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(model->file()));
  if (tok.n_vocab() > model->hparams().n_vocab)
    return Status::Errorf("%s: tokenizer has %d tokens but the embedding has only %d rows",
                          options.model_path.c_str(), tok.n_vocab(), model->hparams().n_vocab);
  int n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(model->hparams().n_ctx_train, 4096);
  if (n_ctx < 1) return Status::Error("context size must be at least 1");
  auto session = std::unique_ptr<Session>(
      new Session(std::move(model), std::make_unique<Tokenizer>(std::move(tok)), options.n_threads, n_ctx));
  session->load_seconds_ = load_timer.elapsed();
  return session;
}

Result<std::vector<int32_t>> Session::tokenize(const std::string& text, bool parse_special) const {
  return tokenizer_->encode(text, /*add_special=*/true, parse_special);
}

Status Session::evaluate(const std::vector<int32_t>& tokens, bool all_rows, std::vector<float>* logits) {
  const ModelHParams& hp = model_->hparams();
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return Status::Error("nothing to evaluate (empty token list)");
  if (n_past_ + n > cache_.n_ctx())
    return Status::Errorf("sequence of %lld tokens does not fit the context of %d tokens (use --ctx-size)",
                          static_cast<long long>(n_past_ + n), cache_.n_ctx());
  for (int32_t t : tokens)
    if (t < 0 || t >= hp.n_vocab) return Status::Errorf("token id %d is outside the vocabulary (0..%d)", t, hp.n_vocab - 1);

  ForwardBatch batch = ForwardBatch::causal(tokens, n_past_);
  hidden_.resize(static_cast<size_t>(n) * hp.n_embd);
  transformer_.embed(model_->weights(), tokens.data(), n, hidden_.data());
  transformer_.run_layers(model_->weights(), batch, 0, hp.n_layer, cache_, hidden_.data());
  n_past_ += static_cast<int>(n);
  cache_.set_committed(n_past_);
  if (logits) {
    const int64_t rows = all_rows ? n : 1;
    const float* first = hidden_.data() + (all_rows ? 0 : (n - 1) * hp.n_embd);
    logits->resize(static_cast<size_t>(rows) * hp.n_vocab);
    transformer_.logits(model_->weights(), first, rows, logits->data());
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
  return stats;
}

}  // namespace sf
