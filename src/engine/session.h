// Session: one model with its tokenizer, KV cache, threads and forward pass, and the
// plain autoregressive generation loop. The entry point the CLI, server and benchmarks
// use. Not thread-safe: one request at a time per Session.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "model/transformer.h"
#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace sf {

struct SessionOptions {
  std::string model_path;
  int n_threads = 0;  // 0: one per hardware thread
  int n_ctx = 0;      // 0: min(training context, 4096)
};

struct GenerationStats {
  int prompt_tokens = 0;
  int generated_tokens = 0;
  double load_seconds = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
  uint64_t peak_rss_bytes = 0;
  double prefill_tokens_per_s() const { return prefill_seconds > 0 ? prompt_tokens / prefill_seconds : 0; }
  // Decode rate counts tokens produced by decode steps (the first token comes from prefill).
  double decode_tokens_per_s() const {
    return decode_seconds > 0 ? (generated_tokens > 1 ? generated_tokens - 1 : 0) / decode_seconds : 0;
  }
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(const SessionOptions& options);

  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  int n_ctx() const { return cache_.n_ctx(); }
  int n_past() const { return n_past_; }
  ThreadPool& pool() { return pool_; }
  double load_seconds() const { return load_seconds_; }

  // Text to ids with the model's BOS rule; errors on invalid input.
  Result<std::vector<int32_t>> tokenize(const std::string& text, bool parse_special = true) const;

  // Forgets the cached sequence.
  void reset() { n_past_ = 0; cache_.set_committed(0); }

  // Appends tokens to the sequence and runs the forward pass. logits receives
  // [n, n_vocab] when all_rows, else the last row's [n_vocab]. Error if the context
  // would overflow.
  Status evaluate(const std::vector<int32_t>& tokens, bool all_rows, std::vector<float>* logits);

  // Plain autoregressive generation after reset(). on_token gets each generated id and its
  // complete-UTF-8 text (possibly empty while a character is incomplete); return false to
  // stop. Stops at an end-of-generation token unless ignore_eos.
  Result<GenerationStats> generate(const std::vector<int32_t>& prompt, int n_predict,
                                   const SamplingParams& sampling, bool ignore_eos,
                                   const std::function<bool(int32_t, const std::string&)>& on_token);

 private:
  Session(std::unique_ptr<Model> model, std::unique_ptr<Tokenizer> tokenizer, int n_threads, int n_ctx);

  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ThreadPool pool_;
  KvCache cache_;
  Transformer transformer_;
  std::vector<float> hidden_;
  int n_past_ = 0;
  double load_seconds_ = 0;
};

}  // namespace sf
