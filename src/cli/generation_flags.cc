#include "cli/generation_flags.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/prompt_text.h"
#include "weights/memory_budget.h"

namespace sf::cli {

void GenerationFlags::add_to(CLI::App& app, const std::string& n_predict_help) {
  app.add_option("-n,--n-predict", n_predict, n_predict_help + "; -1 = until end of text or a full context")
      ->check(CLI::Range(-2, 1 << 20));
  app.add_option("--temp", sampling.temperature, "temperature; 0 = greedy")->check(CLI::Range(0.0, 100.0));
  app.add_option("--top-k", sampling.top_k, "keep the k most likely tokens; 0 = off")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", sampling.top_p, "nucleus sampling threshold; 1 = off")->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-p", sampling.min_p, "drop tokens below min-p times the top probability; 0 = off")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--repeat-penalty", sampling.repeat_penalty,
                 "divide the logits of tokens in the last --repeat-last-n by this; 1 = off (sampling only)")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--repeat-last-n", sampling.repeat_last_n, "tokens the penalties look back over; 0 = off, -1 = all")
      ->check(CLI::Range(-1, 1 << 22));
  app.add_option("--presence-penalty", sampling.presence_penalty,
                 "subtract this from the logit of every token in that window; 0 = off (sampling only)")
      ->check(CLI::Range(-10.0, 10.0));
  app.add_option("--frequency-penalty", sampling.frequency_penalty,
                 "subtract this per occurrence in that window; 0 = off (sampling only)")
      ->check(CLI::Range(-10.0, 10.0));
  app.add_option("-s,--seed", seed, "random seed; -1 = a new random seed each run (printed by --stats)")
      ->check(CLI::Range(int64_t{-1}, int64_t{INT64_MAX}));
  app.add_option("-r,--reverse-prompt,--stop", reverse_prompts,
                 "stop when the output contains this text (not printed); repeatable");
  app.add_flag("-e,--escape,!--no-escape", escape,
               "process escapes (\\n \\t \\\\ \\\" \\xHH) in the prompt and -r (default: on, like llama.cpp)");
  app.add_flag("--ignore-eos", ignore_eos, "keep generating past end-of-sequence tokens");
  app.add_flag("--stats", stats, "print timing, speculative and streaming statistics to stderr");
  app.add_option("--stats-json", stats_json_path, "write the statistics as one JSON object to this file");
}

void GenerationFlags::finish() {
  sampling.seed =
      seed >= 0 ? static_cast<uint64_t>(seed) : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  // Seeds above INT64_MAX cannot be given back with --seed; keep them in range.
  sampling.seed &= 0x7FFFFFFFFFFFFFFFull;
  if (escape)
    for (auto& r : reverse_prompts) r = process_escapes(r);
}

int GenerationFlags::tokens_to_generate(int n_ctx, int n_prompt) const {
  if (n_predict >= 0) return n_predict;
  return std::max(0, n_ctx - n_prompt);
}

namespace {
// One object per speculative cycle: what the tree builder and the pruner did, and the time.
nlohmann::json cycles_json(const std::vector<CycleStats>& cycles) {
  nlohmann::json a = nlohmann::json::array();
  for (const CycleStats& c : cycles) {
    nlohmann::json o = {{"tree_nodes", c.tree_nodes},
                        {"max_depth", c.max_depth},
                        {"rows_verified", c.rows_verified},
                        {"rows_pruned", c.rows_pruned},
                        {"accepted", c.accepted},
                        {"head_rows", c.head_rows},
                        {"context", c.context},
                        {"draft_seconds", c.draft_seconds},
                        {"verify_seconds", c.verify_seconds},
                        {"io_stall_seconds", c.io_stall_seconds},
                        {"policy", c.policy}};
    // EdgeLLM: alpha over time and the provisional tokens of each verification.
    if (c.threshold >= 0) o["alpha"] = c.threshold;
    if (c.provisional_tokens > 0 || c.carried_nodes > 0) {
      o["provisional_tokens"] = c.provisional_tokens;
      o["provisional_kept"] = c.provisional_kept;
      o["provisional_seconds"] = c.provisional_seconds;
      o["carried_nodes"] = c.carried_nodes;
    }
    // Mirror-SD: eq. 10's terms for this cycle and whether the rollout was reused.
    if (c.mirror_outcome > 0) {
      o["prefix_seconds"] = c.prefix_seconds;
      o["channel_seconds"] = c.channel_seconds;
      o["suffix_seconds"] = c.suffix_seconds;
      o["rollout_seconds"] = c.rollout_seconds;
      o["model_seconds"] =
          c.draft_seconds + c.prefix_seconds + c.channel_seconds + std::max(c.suffix_seconds, c.rollout_seconds);
      o["rollout_tokens"] = c.rollout_tokens;
      o["rollout_kept"] = c.rollout_kept;
      o["mirror"] = c.mirror_outcome == 1 ? "reused" : "fallback";
      o["carried_nodes"] = c.carried_nodes;
    }
    a.push_back(std::move(o));
  }
  return a;
}
// Target passes whose draft tree was empty.
uint64_t cycles_without_draft(const GenerationStats& s) {
  uint64_t n = 0;
  for (const CycleStats& c : s.cycles) n += c.tree_nodes == 0 ? 1 : 0;
  return n;
}

}  // namespace

void print_generation_stats(const GenerationStats& s, const Session& session, uint64_t seed) {
  const int n_threads = const_cast<Session&>(session).pool().size();
  std::fprintf(stderr,
               "\n--- stats ---\n"
               "threads:          %d\n"
               "seed:             %llu\n"
               "load:             %.3f s\n"
               "prompt tokens:    %d  (%.1f tokens/s prefill, %.3f s; %d reused from the cache)\n"
               "generated tokens: %d  (%.2f tokens/s decode, %.3f s)\n"
               "peak RSS:         %.1f MiB\n",
               n_threads, static_cast<unsigned long long>(seed), s.load_seconds, s.prompt_tokens,
               s.prefill_tokens_per_s(), s.prefill_seconds, s.reused_prompt_tokens, s.generated_tokens,
               s.decode_tokens_per_s(), s.decode_seconds, s.peak_rss_bytes / 1048576.0);
  if (session.speculative()) {
    const SpecStats& sp = s.spec;
    std::fprintf(
        stderr,
        "speculative:      %s, %llu target passes, %.2f tokens per pass, drafted %llu, accepted %llu (%.0f%%)\n"
        "time split:       draft %.3f s, verify %.3f s (I/O stall %.3f s); LM head rows %llu, skipped %llu\n",
        SpecConfig::method_name(session.options().spec.method), static_cast<unsigned long long>(sp.cycles),
        s.mean_accepted(), static_cast<unsigned long long>(sp.draft_tokens),
        static_cast<unsigned long long>(sp.accepted_draft_tokens),
        sp.draft_tokens ? 100.0 * sp.accepted_draft_tokens / sp.draft_tokens : 0.0, sp.draft_seconds, sp.verify_seconds,
        s.counters.stream.io_stall_seconds, static_cast<unsigned long long>(sp.head_rows),
        static_cast<unsigned long long>(sp.head_rows_saved));
    std::fprintf(stderr, "tree:             %.1f nodes per cycle (largest %llu), %.1f rows verified per pass",
                 sp.cycles ? static_cast<double>(sp.draft_tokens) / sp.cycles : 0.0,
                 static_cast<unsigned long long>(sp.max_tree_nodes),
                 sp.cycles ? static_cast<double>(sp.rows_verified) / sp.cycles : 0.0);
    // Cycles whose tree was empty decoded one token without speculation (--draft-min, a
    // confidence stop at the root, or a drafter with nothing to propose).
    if (const uint64_t plain = cycles_without_draft(s); plain > 0)
      std::fprintf(stderr, "; %llu of the passes without a draft", static_cast<unsigned long long>(plain));
    if (const TreePruner* pruner = session.tree_pruner())
      std::fprintf(stderr, "; pruned at layer %d (%s, theta %.2f): %llu of %llu rows dropped (%.0f%% kept)",
                   pruner->config().exit_layer, pruner->scorer().name(), static_cast<double>(pruner->config().theta),
                   static_cast<unsigned long long>(sp.rows_pruned), static_cast<unsigned long long>(sp.rows_verified),
                   sp.rows_verified ? 100.0 * (sp.rows_verified - sp.rows_pruned) / sp.rows_verified : 100.0);
    std::fprintf(stderr, "\n");
    if (session.options().spec.method == SpecConfig::Method::kAuto) {
      // Which policy auto ran, in order of first use.
      std::vector<PolicyUse> uses;
      add_policy_uses(s.cycles, &uses);
      std::string line;
      for (const PolicyUse& u : uses) line += (line.empty() ? "" : ", ") + u.policy + " " + std::to_string(u.cycles);
      std::fprintf(stderr, "auto:             cycles per policy: %s\n", line.empty() ? "none" : line.c_str());
    }
    if (const CatsCycle* cats = session.cats())
      std::fprintf(stderr, "cats:             %s; %llu corrections, %llu cycles ended in a side branch\n",
                   cats->options().cuts.describe().c_str(), static_cast<unsigned long long>(sp.corrections),
                   static_cast<unsigned long long>(sp.accepted_corrections));
    const SpecConfig& spec = session.options().spec;
    const bool may_lend = spec.edgellm.provisional && !spec.draft_model_path.empty() &&
                          (spec.method == SpecConfig::Method::kEdgeLlm || spec.method == SpecConfig::Method::kAuto);
    if (spec.method == SpecConfig::Method::kEdgeLlm) {
      double alpha_first = -1, alpha_last = -1, alpha_min = 1, alpha_max = 0;
      for (const CycleStats& cs : s.cycles) {
        if (cs.threshold < 0) continue;
        if (alpha_first < 0) alpha_first = cs.threshold;
        alpha_last = cs.threshold;
        alpha_min = std::min(alpha_min, cs.threshold);
        alpha_max = std::max(alpha_max, cs.threshold);
      }
      if (alpha_first >= 0)
        std::fprintf(stderr, "alpha:            %.3g at the first cycle, %.3g at the last (range %.3g..%.3g)\n",
                     alpha_first, alpha_last, alpha_min, alpha_max);
    }
    // auto's EdgeLLM arm lends like edgellm does (its cycles only).
    if (may_lend)
      std::fprintf(stderr,
                   "provisional:      %llu tokens drafted during the target's I/O waits, %llu kept, %llu wasted; "
                   "%.3f s of draft work in %.3f s of waits lent to it; lent in %llu of %llu cycles (tried only where "
                   "drafting runs past the read-ahead, then "
                   "measured)\n",
                   static_cast<unsigned long long>(sp.provisional_tokens),
                   static_cast<unsigned long long>(sp.provisional_kept),
                   static_cast<unsigned long long>(sp.provisional_tokens - sp.provisional_kept), sp.provisional_seconds,
                   sp.provisional_lent_seconds, static_cast<unsigned long long>(sp.provisional_cycles),
                   static_cast<unsigned long long>(sp.cycles));
  }
  if (s.generated_tokens > 0)
    std::fprintf(stderr, "bytes per token:  %s of weights read (BPT, decoding only), %s of it from storage\n",
                 format_bytes(static_cast<uint64_t>(s.bytes_per_token())).c_str(),
                 format_bytes(s.decode_stream_bytes / static_cast<uint64_t>(s.generated_tokens)).c_str());
  const bool auto_mirror_arm = session.options().spec.method == SpecConfig::Method::kAuto;
  if (const MirrorSpeculation* m = session.mirror(); m && auto_mirror_arm) {
    // auto's mirror arm: its cycles only (the split of the cores holds during its passes).
    const SpecStats& sp = s.spec;
    const MirrorPlacement placement =
        mirror_placement(session.options().n_threads, session.options().spec.draft_threads);
    std::fprintf(stderr,
                 "mirror:           exit layer %d, kappa %d; during the mirror arm's passes target %d threads, draft "
                 "%d; %llu cycles launched rollouts: %llu reused, %llu fell back; %llu rollout tokens, %llu kept\n",
                 m->exit_layer(), m->kappa(), placement.target_threads, placement.draft_threads,
                 static_cast<unsigned long long>(sp.mirror_cycles), static_cast<unsigned long long>(sp.mirror_reused),
                 static_cast<unsigned long long>(sp.mirror_fallbacks),
                 static_cast<unsigned long long>(sp.rollout_tokens), static_cast<unsigned long long>(sp.rollout_kept));
  } else if (m && s.spec.cycles > 0) {
    const SpecStats& sp = s.spec;
    const double n = static_cast<double>(sp.cycles);
    std::fprintf(stderr,
                 "mirror:           exit layer %d, kappa %d; target %d threads, draft %d; %llu cycles launched "
                 "rollouts: %llu reused, %llu fell back (%.0f%%); %llu rollout tokens, %llu kept\n"
                 "mirror latency:   per cycle T_prefix %.2f ms + channel %.2f ms + max(T_suffix %.2f, T_draft %.2f) "
                 "ms + fresh draft %.2f ms = T %.2f ms; measured %.2f ms\n",
                 m->exit_layer(), m->kappa(), n_threads,
                 session.options().spec.draft_threads > 0
                     ? session.options().spec.draft_threads
                     : mirror_placement(session.options().n_threads, 0).draft_threads,
                 static_cast<unsigned long long>(sp.mirror_cycles), static_cast<unsigned long long>(sp.mirror_reused),
                 static_cast<unsigned long long>(sp.mirror_fallbacks),
                 sp.mirror_cycles ? 100.0 * sp.mirror_fallbacks / sp.mirror_cycles : 0.0,
                 static_cast<unsigned long long>(sp.rollout_tokens), static_cast<unsigned long long>(sp.rollout_kept),
                 1e3 * sp.prefix_seconds / n, 1e3 * sp.channel_seconds / n, 1e3 * sp.suffix_seconds / n,
                 1e3 * sp.rollout_seconds / n, 1e3 * sp.draft_seconds / n, 1e3 * sp.model_seconds / n,
                 1e3 * (sp.draft_seconds + sp.verify_seconds) / n);
  }
  const ResidencyPlan& plan = session.plan();
  std::fprintf(stderr, "residency:        %s\n", plan.describe().c_str());
  const SessionCounters& c = s.counters;
  if (const LayerStreamer* st = session.streamer()) {
    const bool emulated = st->emulated();
    const double tokens = std::max(1, s.generated_tokens);
    std::fprintf(stderr,
                 "streaming:        %s%s%s\n"
                 "bytes read:       %s (%s per generated token, %s per pass, %llu passes)\n"
                 "I/O time:         %.3f s%s, %.2f GB/s%s\n",
                 st->backend_name(), st->direct_io() ? ", O_DIRECT" : ", buffered+DONTNEED",
                 emulated ? ", EMULATED bandwidth" : "", format_bytes(c.stream.bytes_read).c_str(),
                 format_bytes(static_cast<uint64_t>(c.stream.bytes_read / tokens)).c_str(),
                 format_bytes(plan.streamed_bytes_per_pass).c_str(), static_cast<unsigned long long>(c.forward_passes),
                 c.stream.io_seconds, emulated ? " (emulated)" : "",
                 c.stream.io_seconds > 0 ? c.stream.bytes_read / c.stream.io_seconds / 1e9 : 0.0,
                 emulated ? " (emulated)" : "");
    if (emulated && c.stream.device_seconds > 0) {
      // Emulation only slows reads down: a device slower than the emulated rate sets the pace.
      const double device_rate = c.stream.bytes_read / c.stream.device_seconds;
      std::fprintf(stderr, "real device:      %.3f s, %.2f GB/s%s\n", c.stream.device_seconds, device_rate / 1e9,
                   device_rate < st->emulated_bandwidth()
                       ? " (slower than the emulated rate: the reads ran at the device's own speed)"
                       : "");
    }
    std::fprintf(stderr, "compute time:     %.3f s; waited on I/O %.3f s (%.0f%% of forward time)\n",
                 c.compute_seconds(), c.stream.io_stall_seconds,
                 c.forward_seconds > 0 ? 100.0 * c.stream.io_stall_seconds / c.forward_seconds : 0.0);
  }
}

std::string generation_stats_json(const GenerationStats& s, const Session& session, uint64_t seed) {
  const int n_threads = const_cast<Session&>(session).pool().size();
  const SessionCounters& c = s.counters;
  const LayerStreamer* st = session.streamer();
  const bool spec = session.speculative();
  const nlohmann::json j = {
      {"target_passes", spec ? s.spec.cycles : (s.generated_tokens > 0 ? s.generated_tokens : 0)},
      {"mean_accepted", s.mean_accepted()},
      {"draft_tokens", s.spec.draft_tokens},
      {"cycles_without_draft", cycles_without_draft(s)},
      {"accepted_draft_tokens", s.spec.accepted_draft_tokens},
      {"rows_verified", s.spec.rows_verified},
      {"rows_pruned", s.spec.rows_pruned},
      {"max_tree_nodes", s.spec.max_tree_nodes},
      {"verify_io_stall_seconds", s.spec.verify_io_stall_seconds},
      {"provisional_cycles", s.spec.provisional_cycles},
      {"provisional_tokens", s.spec.provisional_tokens},
      {"provisional_kept", s.spec.provisional_kept},
      {"provisional_seconds", s.spec.provisional_seconds},
      {"provisional_lent_seconds", s.spec.provisional_lent_seconds},
      {"mirror_cycles", s.spec.mirror_cycles},
      {"mirror_reused", s.spec.mirror_reused},
      {"mirror_fallbacks", s.spec.mirror_fallbacks},
      {"rollout_tokens", s.spec.rollout_tokens},
      {"rollout_kept", s.spec.rollout_kept},
      {"mirror_prefix_seconds", s.spec.prefix_seconds},
      {"mirror_channel_seconds", s.spec.channel_seconds},
      {"mirror_suffix_seconds", s.spec.suffix_seconds},
      {"mirror_rollout_seconds", s.spec.rollout_seconds},
      {"mirror_model_seconds", s.spec.model_seconds},
      {"method", spec ? SpecConfig::method_name(session.options().spec.method) : "none"},
      {"cycles", cycles_json(s.cycles)},
      {"head_rows_saved", s.spec.head_rows_saved},
      {"draft_seconds", s.spec.draft_seconds},
      {"verify_seconds", s.spec.verify_seconds},
      {"bytes_read", c.stream.bytes_read},
      {"bytes_read_per_token", s.generated_tokens > 0 ? c.stream.bytes_read / s.generated_tokens : 0},
      {"decode_weight_bytes", s.decode_weight_bytes},
      {"decode_bpt", s.bytes_per_token()},
      {"decode_stream_bytes", s.decode_stream_bytes},
      {"corrections", s.spec.corrections},
      {"accepted_corrections", s.spec.accepted_corrections},
      {"io_seconds", c.stream.io_seconds},
      {"device_seconds", c.stream.device_seconds},
      {"compute_seconds", c.compute_seconds()},
      {"io_stall_seconds", c.stream.io_stall_seconds},
      {"resident_weight_bytes", session.plan().base_bytes + session.plan().resident_unit_bytes},
      {"streamed_bytes_per_pass", session.plan().streamed_bytes_per_pass},
      {"forward_passes", c.forward_passes},
      {"memory_footprint_bytes", session.plan().footprint_bytes()},
      {"memory_budget_bytes", session.plan().budget_bytes},
      {"io_backend", st ? st->backend_name() : "none"},
      {"io_bandwidth_emulated", st ? st->emulated() : false},
      {"prompt_tokens", s.prompt_tokens},
      {"reused_prompt_tokens", s.reused_prompt_tokens},
      {"generated_tokens", s.generated_tokens},
      {"prefill_tokens_per_s", s.prefill_tokens_per_s()},
      {"decode_tokens_per_s", s.decode_tokens_per_s()},
      {"prefill_seconds", s.prefill_seconds},
      {"decode_seconds", s.decode_seconds},
      {"load_seconds", s.load_seconds},
      {"peak_rss_bytes", s.peak_rss_bytes},
      {"threads", n_threads},
      {"seed", seed}};
  return j.dump(2) + "\n";
}

}  // namespace sf::cli
