// Session: one model with its tokenizer, KV cache, threads and forward pass, and the
// plain autoregressive generation loop. The weights are fully resident, or, under a
// memory budget, partly pinned and partly streamed from storage on every forward pass
// (weights/). The entry point the CLI, server and benchmarks use.
//
// Slots: a Session holds options.n_slots independent sequences over the one set of weights,
// tokenizer, thread pool and layer source. Each slot has its own KV cache (and so its own
// prompt-prefix cache), scratch, drafter and tree builder; all slots' memory is counted in
// the budget at creation. The CLI uses slot 0 through the slot-less overloads.
//
// Thread-safety: not thread-safe. The layer source (a streamer) and the thread pool serve
// one forward pass at a time, so at most one thread may be inside a Session call at any
// moment. A caller that interleaves generations on different slots (the server) must hold
// one exclusive lock around generate(); it may release that lock inside on_token, because
// no forward pass and no weight acquisition is in flight while on_token runs.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/background_worker.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"
#include "sampling/sampler.h"
#include "spec/cats_cycle.h"
#include "spec/compute_gate.h"
#include "spec/draft_model_drafter.h"
#include "spec/history_store.h"
#include "spec/mirror_rollout.h"
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
  int n_slots = 1;  // independent sequences (KV cache, prefix cache, drafter) sharing the weights
  // Optional: for an evaluate() longer than max_batch (a long prompt's prefill), called
  // with (0, total) before the first chunk and (rows done, total) after each chunk.
  std::function<void(int64_t done, int64_t total)> prefill_progress;
  // Optional: when it becomes true, a long evaluate() stops between chunks with an error
  // whose message is kCancelledMessage (chat's Ctrl-C during a long prefill). The tokens
  // evaluated so far stay cached and are reused by the next generate().
  const std::atomic<bool>* cancel = nullptr;
  static constexpr const char* kCancelledMessage = "cancelled";
};

// Per-call changes to speculative decoding in a session that has a drafter (the server's
// per-request knobs). Default: the session's own configuration.
struct SpecOverride {
  bool disable = false;                                   // plain decoding for this call
  SpecConfig::Method method = SpecConfig::Method::kNone;  // kNone: the session's method
  int draft_len = 0;                                      // 0: the session's draft length
  bool active() const { return !disable && (method != SpecConfig::Method::kNone || draft_len > 0); }
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
  // Decoding only (prefill excluded): weight bytes the passes read wherever they live
  // (CATS's BPT numerator) and bytes read from storage.
  uint64_t decode_weight_bytes = 0;
  uint64_t decode_stream_bytes = 0;
  // Decoding only: seconds the target's passes waited for streamed weights (the draft's
  // time is spec.draft_seconds; the rest of decode_seconds is the target's compute).
  double decode_io_stall_seconds = 0;
  // CATS bytes per token: weight bytes read per generated token while decoding.
  double bytes_per_token() const {
    return generated_tokens > 0 ? static_cast<double>(decode_weight_bytes) / generated_tokens : 0;
  }
  // Tokens committed per target forward pass during decoding (bonus token included).
  double mean_accepted() const {
    return spec.cycles > 0 ? static_cast<double>(spec.accepted_draft_tokens + spec.cycles) / spec.cycles : 1.0;
  }
  double prefill_tokens_per_s() const { return prefill_seconds > 0 ? prompt_tokens / prefill_seconds : 0; }
  // Every decoding loop (plain, speculative, CATS) samples the first token from the
  // prefill's logits, so its decoding passes produce the rest. (Until 2026-12-07 the
  // speculative loops' prefill stopped one token short and their first cycle's pass ran the
  // prompt's last token with the first tree: one target pass more per generation.)
  bool first_token_from_prefill = false;
  // Tokens produced by the decoding passes (timed in decode_seconds).
  int decode_tokens() const {
    return first_token_from_prefill ? (generated_tokens > 1 ? generated_tokens - 1 : 0) : generated_tokens;
  }
  // Decode rate: the tokens the decoding passes produced over their time. (Counting the
  // first token as the prefill's for every method, as before 2026-11-26, charged each
  // speculative generation one pass more than plain decoding: 1/63 of a 64-token
  // generation, 1/7 of an 8-token one.)
  double decode_tokens_per_s() const { return decode_seconds > 0 ? decode_tokens() / decode_seconds : 0; }
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(const SessionOptions& options);

  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ResidencyPlan& plan() const { return plan_; }
  const SessionOptions& options() const { return options_; }
  const LayerStreamer* streamer() const { return streamer_.get(); }
  int n_slots() const { return static_cast<int>(slots_.size()); }
  int n_ctx() const { return slots_[0].target->n_ctx(); }
  int n_past() const { return slots_[0].target->n_past(); }
  const Drafter* drafter() const { return slots_[0].drafter.get(); }
  // CATS / Kangaroo self-speculation (no draft model), or null.
  const CatsCycle* cats() const { return slots_[0].cats.get(); }
  bool speculative() const { return drafter() != nullptr || cats() != nullptr; }
  const TreeBuilder* tree_builder() const { return slots_[0].builder.get(); }
  TreeBuilder* tree_builder() { return slots_[0].builder.get(); }
  const TreePruner* tree_pruner() const { return pruner_.get(); }
  // Whether auto's LEVER arm has its trees pruned: only where no layer after the exit layer
  // streams.
  bool auto_prunes() const;
  const MirrorSpeculation* mirror() const { return mirror_.get(); }
  // The key of this session's latency profile (model, budget, storage rate, threads). The
  // builders' profile is seeded at creation: loaded from spec.profile_path when that file's
  // key matches, else measured then.
  LatencyProfile::Key profile_key() const;
  // auto (session_auto_profile.cc): the file where this session keeps what auto learnt
  // (spec.auto_profile_dir and a key naming the model pair, budget, storage, threads, host
  // and arms); empty when nothing is kept.
  const std::string& auto_profile_path() const { return auto_profile_path_; }
  // Slot 0's target runner (forward passes, KV cache), for tools that measure passes.
  ModelRunner& target() { return *slots_[0].target; }
  // The tokens whose K/V a slot's cache still holds (its prefix cache).
  const std::vector<int32_t>& cached_tokens(int slot) const { return slots_.at(slot).target->committed_tokens(); }
  ThreadPool& pool() { return pool_; }
  double load_seconds() const { return load_seconds_; }
  // All slots together (slot: one slot's runner; the stream stats are always the shared
  // streamer's, which serves every slot).
  SessionCounters counters() const;
  SessionCounters counters(int slot) const;

  // Text to ids with the model's BOS rule; errors on invalid input.
  Result<std::vector<int32_t>> tokenize(const std::string& text, bool parse_special = true) const;

  // Forgets slot 0's cached sequence.
  void reset() { slots_[0].target->reset(); }

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
                                   bool ignore_eos, const std::function<bool(int32_t, const std::string&)>& on_token) {
    return generate(0, prompt, n_predict, sampling, ignore_eos, SpecOverride{}, on_token);
  }
  // The speculative configuration a call with `spec` would use (its method is kNone for
  // plain decoding); an error names what is wrong (no drafter, sizes out of range).
  Result<SpecConfig> resolve_spec(const SpecOverride& spec) const;

  // The same in a given slot, with per-call speculation changes (an error if they ask for
  // speculation the session has no drafter for, or are out of range). The stats' forward
  // counters are the slot's own; its stream counters are the shared streamer's over the
  // call, so they include other slots' reads when slots interleave.
  Result<GenerationStats> generate(int slot, const std::vector<int32_t>& prompt, int n_predict,
                                   const SamplingParams& sampling, bool ignore_eos, const SpecOverride& spec,
                                   const std::function<bool(int32_t, const std::string&)>& on_token);

 private:
  Session(std::unique_ptr<Model> model, std::unique_ptr<Tokenizer> tokenizer, const SessionOptions& options);
  // One sequence: the target's runner (KV cache, prefix cache) and the drafter's state.
  struct Slot {
    std::unique_ptr<ModelRunner> target;
    std::unique_ptr<Drafter> drafter;
    std::unique_ptr<TreeBuilder> builder;
    std::unique_ptr<CatsCycle> cats;  // self-speculation instead of drafter + builder
  };
  // Decoding loops after prefill; both fill stats and call on_token.
  // Truncates the target cache to the longest common prefix of its tokens and prompt[0, limit).
  static size_t reuse_cached_prefix(ModelRunner& target, const std::vector<int32_t>& prompt, size_t limit);
  Status evaluate(ModelRunner& target, const std::vector<int32_t>& tokens, bool all_rows, std::vector<float>* logits);
  Status decode_plain(ModelRunner& target, const std::vector<int32_t>& prompt, int n_predict,
                      const SamplingParams& sampling, bool ignore_eos,
                      const std::function<bool(int32_t, const std::string&)>& on_token, GenerationStats* stats);
  Status seed_latency_profile();
  // auto: starts every slot's auto builder from the profile file, when there is one with
  // this session's key (an unreadable file or a different key: a warning, and a fresh start).
  void start_auto_profile();
  // auto: saves what the slot's builder learnt (after each generation; a failure to write
  // warns once and the generation goes on).
  void save_auto_profile(TreeBuilder& builder);
  std::string auto_profile_key() const;
  // "name:size" of a model file, how the profiles' keys name a model (a copy of the same
  // file elsewhere is the same model; a different size is not).
  static std::string file_identity(const std::string& path);
  // Retrieval drafting (session_retrieval.cc): gives every slot a retrieval drafter (merged
  // with its draft model, if any) and adds their memory to *drafter_bytes.
  Status add_retrieval_drafters(int n_ctx, uint64_t* drafter_bytes);
  // Prefill that keeps the target's top-k next tokens at every evaluated position (for a
  // drafter's calibration); like evaluate() otherwise, with the last row's logits in
  // *last_logits (when given).
  Status evaluate_top_k(ModelRunner& target, const std::vector<int32_t>& tokens, int k,
                        std::vector<std::vector<TokenProb>>* rows, std::vector<float>* last_logits = nullptr);
  // pruner: early-exit pruning for this call (lever), or none.
  Status decode_speculative(Slot& slot, TreeBuilder& builder, const TreePruner* pruner,
                            const std::vector<int32_t>& prompt, int n_predict, const SamplingParams& sampling,
                            bool ignore_eos, const std::function<bool(int32_t, const std::string&)>& on_token,
                            GenerationStats* stats);

  // CATS / Kangaroo (cats_decode.cc): self-speculative cycles with the target's own layers.
  Status decode_cats(Slot& slot, const SpecConfig& spec, const std::vector<int32_t>& prompt, int n_predict,
                     const SamplingParams& sampling, bool ignore_eos,
                     const std::function<bool(int32_t, const std::string&)>& on_token, GenerationStats* stats);

  SessionOptions options_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ThreadPool pool_;
  ResidencyPlan plan_;
  std::unique_ptr<LayerStreamer> streamer_;
  std::unique_ptr<ResidentLayerSource> resident_source_;
  // EdgeLLM's provisional generation (also auto's EdgeLLM arm): the threads the draft runs
  // on while the target's pool waits for I/O (between passes it has the session's pool),
  // the worker thread that drives it during verification, and the gate that lends it the
  // cores. Null unless the session's method uses them.
  std::unique_ptr<ThreadPool> ahead_pool_;
  std::unique_ptr<BackgroundWorker> draft_worker_;
  std::unique_ptr<ComputeGate> compute_gate_;
  // Mirror-SD: the draft's own thread group, on which the rollouts run. With --spec mirror
  // the target's pool (pool_) has the other cores and the draft runs on draft_pool_ for
  // the whole session; for auto's mirror arm the split holds only during that arm's
  // verification passes: the target then runs on rollout_target_pool_ (the cores the draft
  // does not take), and between passes both have the session's pool.
  std::unique_ptr<ThreadPool> draft_pool_;
  std::unique_ptr<ThreadPool> rollout_target_pool_;
  std::unique_ptr<BackgroundWorker> rollout_worker_;
  std::vector<Slot> slots_;
  // Mirror-SD: the token channel and the rollouts (run by rollout_worker_ on draft_pool_).
  std::unique_ptr<MirrorSpeculation> mirror_;
  std::unique_ptr<TreePruner> pruner_;  // early-exit pruning (lever), shared by the slots: stateless
  // coordgen's persistent store, shared by the slots.
  std::shared_ptr<HistoryStore> history_;
  double load_seconds_ = 0;
  std::string auto_profile_path_, auto_profile_key_;
  int64_t auto_profile_generations_ = 0;
  bool auto_profile_warned_ = false;
};

}  // namespace sf
