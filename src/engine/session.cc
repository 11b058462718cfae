#include "engine/session.h"

#include <algorithm>
#include <filesystem>

#include "base/log.h"
#include "base/memory_usage.h"
#include "base/timer.h"
#include "gguf/gguf_file.h"
#include "kv/kv_cache.h"
#include "model/transformer.h"
#include "spec/verify_profiler.h"

namespace sf {

namespace {
// Added to a budget error with several slots: every slot's KV cache is in the footprint, so
// fewer slots is a lever too.
std::string slots_hint(int n_slots, uint64_t kv_per_slot, int n_ctx) {
  return " (the footprint counts " + std::to_string(n_slots) + " slots of " + std::to_string(n_ctx) +
         " tokens, each with a KV cache of " + format_bytes(kv_per_slot) + "; fewer slots (--parallel) need less)";
}

// After the drafter refused a draft for its vocabulary: which token differs, so the user
// can tell a different tokenizer from, say, one added special token. Empty if unreadable.
std::string describe_vocabulary_difference(const std::string& draft_path, const Tokenizer& target) {
  auto file = gguf::GgufFile::open(draft_path);
  if (!file.ok()) return "";
  auto draft = Tokenizer::from_gguf(*file);
  if (!draft.ok()) return "";
  const int32_t n = std::min(draft->n_vocab(), target.n_vocab());
  for (int32_t id = 0; id < n; ++id)
    if (draft->token_text(id) != target.token_text(id))
      return "first difference at token " + std::to_string(id) + ": the target has '" + target.token_text(id) +
             "', the draft '" + draft->token_text(id) + "'";
  if (draft->n_vocab() != target.n_vocab())
    return "the first " + std::to_string(n) + " tokens agree; the " + (draft->n_vocab() > n ? "draft" : "target") +
           " has " + std::to_string(std::max(draft->n_vocab(), target.n_vocab()) - n) + " more";
  return "every token's text agrees; the token types (normal/control/byte) or the embedding rows differ";
}

}  // namespace

Session::Session(std::unique_ptr<Model> model, std::unique_ptr<Tokenizer> tokenizer, const SessionOptions& options)
    : options_(options),
      model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      // Mirror-SD runs the draft beside the target: the target gets the cores the draft does not.
      pool_(options.spec.method == SpecConfig::Method::kMirror
                ? mirror_placement(options.n_threads, options.spec.draft_threads).target_threads
                : options.n_threads) {}

Result<std::unique_ptr<Session>> Session::create(const SessionOptions& options) {
  Stopwatch load_timer;
  if (options.max_batch < 1) return Status::Error("max batch must be at least 1");
  if (options.stream_buffers < 1) return Status::Error("at least one stream buffer is needed");
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::open(options.model_path));
  SF_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(model->file()));
  const ModelHParams& hp = model->hparams();
  if (tok.n_vocab() > hp.n_vocab)
    return Status::Errorf("%s: tokenizer has %d tokens but the embedding has only %d rows", options.model_path.c_str(),
                          tok.n_vocab(), hp.n_vocab);
  const int n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(hp.n_ctx_train, 4096);

  auto session =
      std::unique_ptr<Session>(new Session(std::move(model), std::make_unique<Tokenizer>(std::move(tok)), options));
  Session& s = *session;

  if (options.n_slots < 1) return Status::Error("a session needs at least one slot");
  const int n_slots = options.n_slots;
  s.slots_.resize(static_cast<size_t>(n_slots));

  // A draft model is always resident and counts against the budget first. Its weights are
  // loaded once; every slot has its own drafter state (KV cache, scratch) over them.
  uint64_t draft_bytes = 0;
  const SpecConfig& spec = options.spec;
  // auto prunes its LEVER arm's trees when the target has a middle layer to exit at.
  const bool prune = spec.enabled() && spec.prunes() && (spec.method != SpecConfig::Method::kAuto || hp.n_layer >= 2);
  int exit_layer = 0;
  // Mirror-SD's rollouts: --spec mirror, and auto's mirror arm where the target has a layer
  // to exit at (the token channel needs the LM head resident, as pruning does) and the
  // cores to split (auto_has_mirror_arm).
  const bool mirror_rollouts = spec.enabled() && (spec.method == SpecConfig::Method::kMirror ||
                                                  (spec.method == SpecConfig::Method::kAuto && prune &&
                                                   auto_has_mirror_arm(options.n_threads, spec.draft_threads)));
  // Retrieval methods need no draft model; with one, coordgen merges both (hybrid). CATS
  // and Kangaroo draft with the target's own layers.
  const bool self_spec = spec.self_speculative();
  const bool retrieval_only = spec.enabled() && spec.draft_model_path.empty() && spec.drafts_by_retrieval();
  if (self_spec || retrieval_only) SF_RETURN_IF_ERROR(validate_spec_config(spec));
  if (spec.enabled() && !self_spec && !retrieval_only) {
    if (spec.draft_model_path.empty())
      return Status::Error("speculative decoding needs a draft model (--draft DRAFT.gguf)");
    SF_RETURN_IF_ERROR(validate_spec_config(spec));
    if (prune) {
      exit_layer = spec.prune.exit_layer < 0 ? hp.n_layer / 2 : spec.prune.exit_layer;
      if (exit_layer < 1 || exit_layer >= hp.n_layer)
        return Status::Errorf(
            "--lever-exit-layer %d is outside the model: %s has %d layers, so the exit must be after layer 1..%d",
            exit_layer, options.model_path.c_str(), hp.n_layer, hp.n_layer - 1);
    }
    // Provisional generation (EdgeLLM, and auto's EdgeLLM arm) drafts while the target's
    // pool waits for weights, so the draft gets a thread of its own for that (one by
    // default: a pool's idle workers spin briefly after each op, which would take cycles
    // from the target whenever the gate closes mid-step; a draft small enough to be worth
    // running is fast on one core). Between passes it drafts on the session's pool, like
    // every other method. Its worker runs at idle priority (background_worker.h): only
    // cores nothing else wants.
    if ((spec.method == SpecConfig::Method::kEdgeLlm || spec.method == SpecConfig::Method::kAuto) &&
        spec.edgellm.provisional) {
      s.ahead_pool_ = std::make_unique<ThreadPool>(spec.draft_threads > 0 ? spec.draft_threads : 1);
      s.draft_worker_ = std::make_unique<BackgroundWorker>(BackgroundWorker::Priority::kIdle);
      s.compute_gate_ = std::make_unique<ComputeGate>();
    }
    // Mirror-SD drafts rollouts while the target computes: the draft's own thread group
    // (auto's mirror arm: only during its passes, with the target on the other cores).
    if (mirror_rollouts) {
      if (spec.mirror.exit_layer >= 0 && (spec.mirror.exit_layer < 1 || spec.mirror.exit_layer >= hp.n_layer))
        return Status::Errorf(
            "--mirror-exit-layer %d is outside the model: %s has %d layers, so the exit must be after layer 1..%d",
            spec.mirror.exit_layer, options.model_path.c_str(), hp.n_layer, hp.n_layer - 1);
      const MirrorPlacement placement = mirror_placement(options.n_threads, spec.draft_threads);
      s.draft_pool_ = std::make_unique<ThreadPool>(placement.draft_threads);
      if (spec.method == SpecConfig::Method::kAuto)
        s.rollout_target_pool_ = std::make_unique<ThreadPool>(placement.target_threads);
      s.rollout_worker_ = std::make_unique<BackgroundWorker>();
    }
    ThreadPool& draft_pool = spec.method == SpecConfig::Method::kMirror ? *s.draft_pool_ : s.pool_;
    auto created = DraftModelDrafter::create(spec.draft_model_path, *s.tokenizer_, hp.n_vocab, draft_pool, n_ctx);
    if (!created.ok() && created.status().message().find("vocabulary") != std::string::npos) {
      const std::string detail = describe_vocabulary_difference(spec.draft_model_path, *s.tokenizer_);
      if (!detail.empty()) return Status::Error(created.status().message() + " (" + detail + ")");
    }
    SF_ASSIGN_OR_RETURN(std::unique_ptr<DraftModelDrafter> first, std::move(created));
    const ModelHParams& dhp = first->model().hparams();
    draft_bytes = first->resident_bytes() + (KvCache::bytes_for(dhp.n_layer, n_ctx, dhp.kv_dim()) +
                                             Transformer::scratch_bytes(dhp, options.max_batch)) *
                                                static_cast<uint64_t>(n_slots);
    DraftModelDrafter& shared = *first;
    for (size_t i = 0; i < s.slots_.size(); ++i) {
      s.slots_[i].drafter = i == 0 ? std::move(first) : shared.fork(draft_pool, n_ctx);
      s.slots_[i].builder = make_tree_builder(options.spec, mirror_rollouts);
    }
    if (options.mem_budget.kind == MemoryBudget::Kind::kBytes && draft_bytes >= options.mem_budget.bytes)
      return Status::Errorf(
          "the draft model needs %s resident for %d slot(s) (weights, KV cache, scratch), more than the whole "
          "memory budget of %s; use a smaller draft, fewer slots or raise --mem-budget",
          format_bytes(draft_bytes).c_str(), n_slots, format_bytes(options.mem_budget.bytes).c_str());
  }

  if (spec.enabled() && spec.drafts_by_retrieval()) SF_RETURN_IF_ERROR(s.add_retrieval_drafters(n_ctx, &draft_bytes));
  // CATS adapters are resident (weights and one KV cache per slot) and count in the budget.
  CatsConfig cats = spec.cats;
  if (self_spec) {
    const bool kangaroo = spec.method == SpecConfig::Method::kKangaroo;
    if (!cats.draft_adapter.empty() && cats.ldm == -1) {
      SF_ASSIGN_OR_RETURN(cats.ldm, adapter_file_layer(cats.draft_adapter));
    }
    if (!cats.verifier_adapter.empty() && kangaroo)
      return Status::Error("kangaroo verifies with the full model: it takes no verifier adapter");
    if (!cats.verifier_adapter.empty() && cats.lsv == -1) {
      SF_ASSIGN_OR_RETURN(cats.lsv, adapter_file_layer(cats.verifier_adapter));
    }
    const int n_adapters = (cats.draft_adapter.empty() ? 0 : 1) + (cats.verifier_adapter.empty() ? 0 : 1);
    draft_bytes += CatsAdapter::resident_bytes_for(AdapterLayout::for_model(*s.model_), n_ctx) *
                   static_cast<uint64_t>(n_adapters * n_slots);
  }

  if (prune) {
    std::unique_ptr<ExitScorer> scorer;
    if (!spec.prune.predictor_path.empty()) {
      SF_ASSIGN_OR_RETURN(scorer, LinearPredictorScorer::load(spec.prune.predictor_path, *s.model_, exit_layer));
    } else {
      scorer = std::make_unique<LogitLensScorer>(*s.model_);
    }
    draft_bytes += scorer->resident_bytes();
    PruneConfig pc = spec.prune;
    pc.exit_layer = exit_layer;
    s.pruner_ = std::make_unique<TreePruner>(pc, std::move(scorer));
  }

  // Plan what stays in DRAM, then read exactly that. Every slot's KV cache and scratch is
  // allocated up front, so the plan counts all of them.
  const uint64_t kv_bytes = KvCache::bytes_for(hp.n_layer, n_ctx, hp.kv_dim()) * static_cast<uint64_t>(n_slots);
  const uint64_t scratch = (Transformer::scratch_bytes(hp, options.max_batch) +
                            static_cast<uint64_t>(options.max_batch) * hp.n_embd * sizeof(float) +
                            static_cast<uint64_t>(hp.n_vocab) * sizeof(float)) *
                               static_cast<uint64_t>(n_slots) +
                           draft_bytes;
  // Pruning scores the exit layer with the LM head mid-pass, and CATS drafts with it every
  // draft pass: it must be resident.
  bool cats_on_top = false;
  auto plan = self_spec
                  ? plan_residency_as_target_alone(s.model_->weights(), kv_bytes, scratch - draft_bytes, draft_bytes,
                                                   options.mem_budget, options.stream_buffers, &cats_on_top)
                  : plan_residency(s.model_->weights(), kv_bytes, scratch, options.mem_budget, options.stream_buffers,
                                   /*require_head=*/prune || mirror_rollouts);
  if (plan.ok() && cats_on_top)
    SF_LOG_WARN_ONCE(
        "%s: at --mem-budget %s its smallest plan (the LM head pinned, adapters %s) is larger than the "
        "target alone's footprint, so they come on top of it",
        SpecConfig::method_name(spec.method), options.mem_budget.to_string().c_str(),
        format_bytes(draft_bytes).c_str());
  if (!plan.ok()) {
    if (n_slots > 1)
      return Status::Error(plan.status().message() +
                           slots_hint(n_slots, KvCache::bytes_for(hp.n_layer, n_ctx, hp.kv_dim()), n_ctx));
    return plan.status();
  }
  s.plan_ = std::move(plan).value();
  SF_RETURN_IF_ERROR(s.model_->mutable_weights().load_units(s.plan_.resident));

  LayerSource* source = nullptr;
  if (s.plan_.streams()) {
    StreamerOptions so;
    so.emulated_bandwidth = options.io_bandwidth;
    so.io = options.io;
    SF_ASSIGN_OR_RETURN(s.streamer_, LayerStreamer::create(s.model_->weights(), s.plan_, so));
    source = s.streamer_.get();
    SF_LOG_INFO("streaming: %s; I/O backend %s%s%s", s.plan_.describe().c_str(), s.streamer_->backend_name(),
                s.streamer_->direct_io() ? " (O_DIRECT)" : " (buffered + DONTNEED: O_DIRECT refused)",
                options.io_bandwidth > 0 ? ", bandwidth EMULATED" : "");
  } else {
    s.resident_source_ = std::make_unique<ResidentLayerSource>(s.model_->weights());
    source = s.resident_source_.get();
  }
  for (Slot& slot : s.slots_) slot.target = std::make_unique<ModelRunner>(*s.model_, *source, s.pool_, n_ctx);
  if (self_spec) {
    SF_ASSIGN_OR_RETURN(const CatsBoundaries cuts,
                        choose_cats_boundaries(hp.n_layer, s.plan_.n_resident_layers, cats.ldm, cats.lsv,
                                               spec.method == SpecConfig::Method::kKangaroo));
    SF_LOG_INFO("%s: %s", SpecConfig::method_name(spec.method), cuts.describe().c_str());
    CatsCycleOptions co;
    co.cuts = cuts;
    co.gamma = spec.draft_len;
    co.extra_branches = spec.cats.extra_branches;
    for (Slot& slot : s.slots_) {
      std::unique_ptr<CatsAdapter> dm, sv;
      if (!cats.draft_adapter.empty()) {
        SF_ASSIGN_OR_RETURN(
            dm, CatsAdapter::load(cats.draft_adapter, *s.model_, AdapterRole::kDraft, cuts.ldm, n_ctx, s.pool_));
      }
      if (!cats.verifier_adapter.empty()) {
        SF_ASSIGN_OR_RETURN(
            sv, CatsAdapter::load(cats.verifier_adapter, *s.model_, AdapterRole::kVerifier, cuts.lsv, n_ctx, s.pool_));
      }
      slot.cats = std::make_unique<CatsCycle>(*slot.target, co, std::move(dm), std::move(sv));
    }
  }
  if (mirror_rollouts)
    s.mirror_ = std::make_unique<MirrorSpeculation>(
        *s.model_, s.rollout_target_pool_ ? *s.rollout_target_pool_ : s.pool_, *s.rollout_worker_,
        mirror_exit_layer(spec.mirror, hp.n_layer), spec.mirror.kappa, spec.draft_len);
  if (s.slots_[0].builder) SF_RETURN_IF_ERROR(s.seed_latency_profile());
  if (spec.method == SpecConfig::Method::kAuto && !spec.auto_profile_dir.empty()) s.start_auto_profile();
  s.load_seconds_ = load_timer.elapsed();
  return session;
}

std::string Session::file_identity(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return std::filesystem::path(path).filename().string() + ":" + std::to_string(ec ? 0 : size);
}

LatencyProfile::Key Session::profile_key() const {
  LatencyProfile::Key key;
  key.model = file_identity(options_.model_path);
  key.budget = options_.mem_budget.to_string();
  key.io_bandwidth = options_.io_bandwidth;
  key.threads = pool_.size();
  return key;
}

Status Session::seed_latency_profile() {
  LatencyProfile* profile = slots_[0].builder->latency_profile();
  if (!profile) return Status::Ok();
  const LatencyProfile::Key key = profile_key();
  bool loaded_ok = false;
  if (!options_.spec.profile_path.empty()) {
    SF_ASSIGN_OR_RETURN(LatencyProfile loaded, LatencyProfile::load(options_.spec.profile_path));
    if (loaded.key() == key && loaded.has_verify_data()) {
      *profile = std::move(loaded);
      loaded_ok = true;
    } else {
      SF_LOG_WARN("%s was measured for %s at budget %s (%d threads); this session differs, so it is measured again",
                  options_.spec.profile_path.c_str(), loaded.key().model.c_str(), loaded.key().budget.c_str(),
                  loaded.key().threads);
    }
  }
  if (!loaded_ok) {
    profile->set_key(key);
    const int max_nodes = static_cast<int>(max_tree_size(options_.spec));
    ModelRunner& target = *slots_[0].target;
    SF_RETURN_IF_ERROR(
        measure_verify_profile(target, profile_row_counts(max_nodes, target.n_ctx()), 3, false, profile).status());
  }
  // Every slot starts from the same measurements; each then refines its own.
  for (size_t i = 1; i < slots_.size(); ++i)
    if (LatencyProfile* p = slots_[i].builder->latency_profile()) *p = *profile;
  return Status::Ok();
}

SessionCounters Session::counters() const {
  SessionCounters c;
  for (int i = 0; i < n_slots(); ++i) {
    const SessionCounters one = counters(i);
    c.forward_passes += one.forward_passes;
    c.rows_evaluated += one.rows_evaluated;
    c.forward_seconds += one.forward_seconds;
  }
  if (streamer_) c.stream = streamer_->stats();
  return c;
}

SessionCounters Session::counters(int slot) const {
  const ModelRunner& target = *slots_.at(static_cast<size_t>(slot)).target;
  SessionCounters c;
  c.forward_passes = target.counters().forward_passes;
  c.rows_evaluated = target.counters().rows;
  c.forward_seconds = target.counters().forward_seconds;
  if (streamer_) c.stream = streamer_->stats();
  return c;
}

Result<std::vector<int32_t>> Session::tokenize(const std::string& text, bool parse_special) const {
  return tokenizer_->encode(text, /*add_special=*/true, parse_special);
}

Status Session::evaluate(const std::vector<int32_t>& tokens, bool all_rows, std::vector<float>* logits) {
  return evaluate(*slots_[0].target, tokens, all_rows, logits);
}

Status Session::evaluate(ModelRunner& target, const std::vector<int32_t>& tokens, bool all_rows,
                         std::vector<float>* logits) {
  const ModelHParams& hp = model_->hparams();
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return Status::Error("nothing to evaluate (empty token list)");
  if (target.n_past() + n > target.n_ctx())
    return Status::Errorf("sequence of %lld tokens does not fit the context of %d tokens (use --ctx-size)",
                          static_cast<long long>(target.n_past() + n), target.n_ctx());
  if (logits) logits->resize(static_cast<size_t>(all_rows ? n : 1) * hp.n_vocab);
  if (options_.prefill_progress && n > options_.max_batch) options_.prefill_progress(0, n);
  for (int64_t begin = 0; begin < n; begin += options_.max_batch) {
    if (options_.cancel != nullptr && options_.cancel->load()) return Status::Error(SessionOptions::kCancelledMessage);
    const int64_t end = std::min<int64_t>(n, begin + options_.max_batch);
    SF_RETURN_IF_ERROR(target.forward_causal(std::vector<int32_t>(tokens.begin() + begin, tokens.begin() + end)));
    if (options_.prefill_progress && n > options_.max_batch) options_.prefill_progress(end, n);
    if (!logits) continue;
    if (all_rows) {
      SF_RETURN_IF_ERROR(target.logits_all(logits->data() + begin * hp.n_vocab));
    } else if (end == n) {
      SF_RETURN_IF_ERROR(target.begin_head());
      target.row_logits(end - begin - 1, logits->data());
      target.end_head();
    }
  }
  return Status::Ok();
}

// auto's LEVER arm prunes only where a dropped row saves compute: where no layer after the
// exit layer streams. A streamed layer's share of a pass waits on its reads whatever the
// rows, so dropping rows there saves nothing and loses the tokens they would have been
// accepted with (stories260K + draft at EMULATED 25 MB/s, 0% and 25%, every method
// streaming the same bytes: LEVER's trees accepted 6.39 tokens a pass pruned against 6.80
// unpruned, 0.95x the rate, and auto ran them pruned). `--spec lever` prunes as the paper
// does (`--lever-no-prune` switches it off).
bool Session::auto_prunes() const {
  if (!pruner_) return false;
  for (int l = pruner_->config().exit_layer; l < model_->hparams().n_layer; ++l)
    if (!plan_.resident[static_cast<size_t>(l)]) return false;
  return true;
}

Result<GenerationStats> Session::generate(int slot_index, const std::vector<int32_t>& prompt, int n_predict,
                                          const SamplingParams& sampling, bool ignore_eos, const SpecOverride& spec,
                                          const std::function<bool(int32_t, const std::string&)>& on_token) {
  if (slot_index < 0 || slot_index >= n_slots())
    return Status::Errorf("slot %d does not exist (the session has %d)", slot_index, n_slots());
  Slot& slot = slots_[static_cast<size_t>(slot_index)];
  ModelRunner& target = *slot.target;
  SF_ASSIGN_OR_RETURN(const SpecConfig call_spec, resolve_spec(spec));
  // A per-call builder when the call changes the method or the draft length.
  std::unique_ptr<TreeBuilder> call_builder;
  if (spec.active() && !slot.cats) call_builder = make_tree_builder(call_spec, mirror_ != nullptr);
  if (call_builder && call_builder->latency_profile() && slot.builder->latency_profile())
    *call_builder->latency_profile() = *slot.builder->latency_profile();
  GenerationStats stats;
  stats.load_seconds = load_seconds_;
  stats.prompt_tokens = static_cast<int>(prompt.size());
  if (prompt.empty()) return Status::Error("the prompt is empty (no tokens to start from)");
  if (static_cast<int>(prompt.size()) > target.n_ctx())
    return Status::Errorf("the prompt has %zu tokens but the context holds %d (use --ctx-size)", prompt.size(),
                          target.n_ctx());
  const SessionCounters before = counters(slot_index);
  if (call_spec.enabled() && slot.cats) {
    SF_RETURN_IF_ERROR(decode_cats(slot, call_spec, prompt, n_predict, sampling, ignore_eos, on_token, &stats));
  } else if (call_spec.enabled()) {
    TreeBuilder& builder = call_builder ? *call_builder : *slot.builder;
    const bool prunes = call_spec.prunes() && (call_spec.method != SpecConfig::Method::kAuto || auto_prunes());
    const TreePruner* pruner = prunes ? pruner_.get() : nullptr;
    SF_RETURN_IF_ERROR(
        decode_speculative(slot, builder, pruner, prompt, n_predict, sampling, ignore_eos, on_token, &stats));
    if (!call_builder && !auto_profile_path_.empty()) save_auto_profile(builder);
  } else {
    SF_RETURN_IF_ERROR(decode_plain(target, prompt, n_predict, sampling, ignore_eos, on_token, &stats));
  }
  stats.peak_rss_bytes = peak_rss_bytes();
  const SessionCounters after = counters(slot_index);
  stats.counters.forward_passes = after.forward_passes - before.forward_passes;
  stats.counters.rows_evaluated = after.rows_evaluated - before.rows_evaluated;
  stats.counters.forward_seconds = after.forward_seconds - before.forward_seconds;
  stats.counters.stream.bytes_read = after.stream.bytes_read - before.stream.bytes_read;
  stats.counters.stream.units_read = after.stream.units_read - before.stream.units_read;
  stats.counters.stream.io_seconds = after.stream.io_seconds - before.stream.io_seconds;
  stats.counters.stream.device_seconds = after.stream.device_seconds - before.stream.device_seconds;
  stats.counters.stream.io_stall_seconds = after.stream.io_stall_seconds - before.stream.io_stall_seconds;
  stats.counters.stream.restarts = after.stream.restarts - before.stream.restarts;
  return stats;
}

Result<SpecConfig> Session::resolve_spec(const SpecOverride& spec) const {
  SpecConfig config = options_.spec;
  const bool can_speculate = slots_[0].drafter || slots_[0].cats;
  if (!can_speculate) config.method = SpecConfig::Method::kNone;
  if (spec.disable) {
    config.method = SpecConfig::Method::kNone;
    return config;
  }
  if (!spec.active()) return config;
  if (!can_speculate)
    return Status::Error("speculative decoding was asked for, but the session has no draft model (--draft)");
  if (slots_[0].cats && spec.method != SpecConfig::Method::kNone && spec.method != config.method)
    return Status::Errorf("this session runs %s (self-speculation); it cannot switch method per call",
                          SpecConfig::method_name(config.method));
  // A session that drafts by retrieval alone (auto or coordgen without --draft) has no
  // draft model for a per-call method that needs one.
  if (config.draft_model_path.empty() && !slots_[0].cats && spec.method != SpecConfig::Method::kNone &&
      !SpecConfig::is_retrieval(spec.method) && spec.method != SpecConfig::Method::kAuto)
    return Status::Errorf("speculative method %s was asked for, but the session has no draft model (--draft)",
                          SpecConfig::method_name(spec.method));
  if (spec.method != SpecConfig::Method::kNone) {
    if (spec.method != config.method) config.tree_widths.clear();  // the session's widths are for its method
    config.method = spec.method;
  }
  if (spec.draft_len > 0) {
    config.draft_len = spec.draft_len;
    config.tree_widths.clear();
  }
  SF_RETURN_IF_ERROR(validate_spec_config(config));
  return config;
}

size_t Session::reuse_cached_prefix(ModelRunner& target, const std::vector<int32_t>& prompt, size_t limit) {
  const std::vector<int32_t>& cached = target.committed_tokens();
  size_t common = 0;
  while (common < limit && common < cached.size() && cached[common] == prompt[common]) ++common;
  target.truncate(static_cast<int>(common));
  return common;
}

Status Session::decode_plain(ModelRunner& target, const std::vector<int32_t>& prompt, int n_predict,
                             const SamplingParams& sampling, bool ignore_eos,
                             const std::function<bool(int32_t, const std::string&)>& on_token, GenerationStats* stats) {
  Sampler sampler(sampling);
  StreamingDecoder decoder(*tokenizer_);
  std::vector<int32_t> history = prompt;
  std::vector<float> logits;

  Stopwatch prefill_timer;
  // At least the last prompt token is evaluated: its logits start decoding.
  const size_t reused = reuse_cached_prefix(target, prompt, prompt.size() - 1);
  stats->reused_prompt_tokens = static_cast<int>(reused);
  SF_RETURN_IF_ERROR(evaluate(target, {prompt.begin() + reused, prompt.end()}, false, &logits));
  stats->prefill_seconds = prefill_timer.elapsed();
  stats->first_token_from_prefill = true;  // sampled from these logits, below

  Stopwatch decode_timer;
  const uint64_t weight_before = target.counters().weight_bytes;
  const uint64_t stream_before = streamer_ ? streamer_->stats().bytes_read : 0;
  const double stall_before_decode = streamer_ ? streamer_->stats().io_stall_seconds : 0;
  const int n_vocab = model_->hparams().n_vocab;
  for (int i = 0; i < n_predict; ++i) {
    const int32_t next = sampler.sample(logits.data(), n_vocab, history);
    if (!ignore_eos && tokenizer_->is_eog(next)) break;
    history.push_back(next);
    ++stats->generated_tokens;
    if (!on_token(next, decoder.push(next))) break;
    if (i + 1 == n_predict) break;
    if (target.n_past() + 1 > target.n_ctx()) {
      SF_LOG_WARN("context of %d tokens is full; stopping generation", target.n_ctx());
      break;
    }
    SF_RETURN_IF_ERROR(evaluate(target, {next}, false, &logits));
  }
  const std::string tail = decoder.flush();
  if (!tail.empty()) on_token(-1, tail);
  stats->decode_seconds = decode_timer.elapsed();
  stats->decode_weight_bytes = target.counters().weight_bytes - weight_before;
  stats->decode_stream_bytes = (streamer_ ? streamer_->stats().bytes_read : 0) - stream_before;
  stats->decode_io_stall_seconds = (streamer_ ? streamer_->stats().io_stall_seconds : 0) - stall_before_decode;
  return Status::Ok();
}

}  // namespace sf
