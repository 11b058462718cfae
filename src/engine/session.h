// Session: one model with its tokenizer, KV cache, threads and forward pass, and the
// plain autoregressive generation loop. The weights are fully resident, or, under a
// memory budget, partly pinned and partly streamed from storage on every forward pass
// (weights/). The entry point the CLI, server and benchmarks use.
// Not thread-safe: one request at a time per Session.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"
#include "sampling/sampler.h"
#include "spec/draft_model_drafter.h"
#include "spec/model_runner.h"
#include "spec/spec_config.h"
#include "spec/tree_builder.h"
#include "spec/tree_pruner.h"
#include "tokenizer/tokenizer.h"
#include "weights/layer_streamer.h"
#include "weights/memory_budget.h"
#include "weights/residency_plan.h"

namespace sf {

struct SessionOptions {
  std::string model_path;
  int n_threads = 0;        // 0: one per hardware thread
  int n_ctx = 0;            // 0: min(training context, 4096)
  int max_batch = 256;      // rows per forward pass; longer prompts are evaluated in chunks
  MemoryBudget mem_budget;  // default: unlimited (everything resident)
  double io_bandwidth = 0;  // emulated storage rate in bytes/s; 0 = real device
  int stream_buffers = 2;
  DirectReaderOptions io;
  SpecConfig spec;  // speculative decoding (default: plain autoregressive)
  // Optional: for an evaluate() longer than max_batch (a long prompt's prefill), called
  // with (0, total) before the first chunk and (rows done, total) after each chunk.
  std::function<void(int64_t done, int64_t total)> prefill_progress;
  // Optional: when it becomes true, a long evaluate() stops between chunks with an error
  // whose message is kCancelledMessage (chat's Ctrl-C during a long prefill). The tokens
  // evaluated so far stay cached and are reused by the next generate().
  const std::atomic<bool>* cancel = nullptr;
  static constexpr const char* kCancelledMessage = "cancelled";
};

// Counters of everything the session did since creation (or reset_counters()).
struct SessionCounters {
  uint64_t forward_passes = 0;
  uint64_t rows_evaluated = 0;
  double forward_seconds = 0;  // wall time inside forward passes
  StreamStats stream;          // zero when nothing streams
  double compute_seconds() const { return forward_seconds - stream.io_stall_seconds; }
};

struct GenerationStats {
  int prompt_tokens = 0;
  int reused_prompt_tokens = 0;  // prompt tokens whose K/V were still cached (not recomputed)
  int generated_tokens = 0;
  double load_seconds = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
  uint64_t peak_rss_bytes = 0;
  SessionCounters counters;        // for this generation only
  SpecStats spec;                  // zero for plain decoding
  std::vector<CycleStats> cycles;  // per speculative cycle (visited rows omitted)
  // Tokens committed per target forward pass during decoding (bonus token included).
  double mean_accepted() const {
    return spec.cycles > 0 ? static_cast<double>(spec.accepted_draft_tokens + spec.cycles) / spec.cycles : 1.0;
  }
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
  const ResidencyPlan& plan() const { return plan_; }
  const SessionOptions& options() const { return options_; }
  const LayerStreamer* streamer() const { return streamer_.get(); }
  int n_ctx() const { return target_->n_ctx(); }
  int n_past() const { return target_->n_past(); }
  const Drafter* drafter() const { return drafter_.get(); }
  const TreeBuilder* tree_builder() const { return builder_.get(); }
  TreeBuilder* tree_builder() { return builder_.get(); }
  const TreePruner* tree_pruner() const { return pruner_.get(); }
  ThreadPool& pool() { return pool_; }
  // The key of this session's latency profile (model, budget, storage rate, threads). The
  // builder's profile is seeded at creation: loaded from spec.profile_path when that file's
  // key matches, else measured then.
  LatencyProfile::Key profile_key() const;
  // The target's runner (forward passes, KV cache), for tools that measure passes directly.
  ModelRunner& target() { return *target_; }
  double load_seconds() const { return load_seconds_; }
  SessionCounters counters() const;

  // Text to ids with the model's BOS rule; errors on invalid input.
  Result<std::vector<int32_t>> tokenize(const std::string& text, bool parse_special = true) const;

  // Forgets the cached sequence.
  void reset() { target_->reset(); }

  // Appends tokens to the sequence and runs the forward pass (in chunks of max_batch).
  // logits receives [n, n_vocab] when all_rows, else the last row's [n_vocab]. Error if the
  // context would overflow or streaming fails.
  Status evaluate(const std::vector<int32_t>& tokens, bool all_rows, std::vector<float>* logits);

  // Generation from `prompt`. K/V of the longest prefix of the prompt that the cache still
  // holds from the previous call are reused (a chat turn only computes the new message).
  // on_token gets each generated id and its
  // complete-UTF-8 text (possibly empty while a character is incomplete); return false to
  // stop. Stops at an end-of-generation token unless ignore_eos.
  Result<GenerationStats> generate(const std::vector<int32_t>& prompt, int n_predict, const SamplingParams& sampling,
                                   bool ignore_eos, const std::function<bool(int32_t, const std::string&)>& on_token);

 private:
  Session(std::unique_ptr<Model> model, std::unique_ptr<Tokenizer> tokenizer, const SessionOptions& options);
  // Decoding loops after prefill; both fill stats and call on_token.
  // Truncates the target cache to the longest common prefix of its tokens and prompt[0, limit).
  Status seed_latency_profile();
  size_t reuse_cached_prefix(const std::vector<int32_t>& prompt, size_t limit);
  Status decode_plain(const std::vector<int32_t>& prompt, int n_predict, const SamplingParams& sampling,
                      bool ignore_eos, const std::function<bool(int32_t, const std::string&)>& on_token,
                      GenerationStats* stats);
  Status decode_speculative(const std::vector<int32_t>& prompt, int n_predict, const SamplingParams& sampling,
                            bool ignore_eos, const std::function<bool(int32_t, const std::string&)>& on_token,
                            GenerationStats* stats);

  SessionOptions options_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ThreadPool pool_;
  ResidencyPlan plan_;
  std::unique_ptr<LayerStreamer> streamer_;
  std::unique_ptr<ResidentLayerSource> resident_source_;
  std::unique_ptr<ModelRunner> target_;
  std::unique_ptr<Drafter> drafter_;
  std::unique_ptr<TreeBuilder> builder_;
  std::unique_ptr<TreePruner> pruner_;  // early-exit pruning (lever with pruning on)
  double load_seconds_ = 0;
};

}  // namespace sf
