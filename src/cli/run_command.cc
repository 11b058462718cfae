// specflash run: generate text from a prompt, streaming it to stdout.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/log.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/session_flags.h"
#include "engine/session.h"
#include "weights/memory_budget.h"

namespace sf::cli {

namespace {
void print_stats(const GenerationStats& s, const Session& session) {
  const int n_threads = const_cast<Session&>(session).pool().size();
  std::fprintf(stderr,
               "\n--- stats ---\n"
               "threads:          %d\n"
               "load:             %.3f s\n"
               "prompt tokens:    %d  (%.1f tokens/s prefill, %.3f s)\n"
               "generated tokens: %d  (%.2f tokens/s decode, %.3f s)\n"
               "peak RSS:         %.1f MiB\n",
               n_threads, s.load_seconds, s.prompt_tokens, s.prefill_tokens_per_s(), s.prefill_seconds,
               s.generated_tokens, s.decode_tokens_per_s(), s.decode_seconds, s.peak_rss_bytes / 1048576.0);
  if (session.drafter()) {
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
    if (const TreePruner* pruner = session.tree_pruner())
      std::fprintf(stderr, "; pruned at layer %d (%s, theta %.2f): %llu of %llu rows dropped (%.0f%% kept)",
                   pruner->config().exit_layer, pruner->scorer().name(), static_cast<double>(pruner->config().theta),
                   static_cast<unsigned long long>(sp.rows_pruned), static_cast<unsigned long long>(sp.rows_verified),
                   sp.rows_verified ? 100.0 * (sp.rows_verified - sp.rows_pruned) / sp.rows_verified : 100.0);
    std::fprintf(stderr, "\n");
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
                 "I/O time:         %.3f s%s, %.2f GB/s%s\n"
                 "compute time:     %.3f s; waited on I/O %.3f s (%.0f%% of forward time)\n",
                 st->backend_name(), st->direct_io() ? ", O_DIRECT" : ", buffered+DONTNEED",
                 emulated ? ", EMULATED bandwidth" : "", format_bytes(c.stream.bytes_read).c_str(),
                 format_bytes(static_cast<uint64_t>(c.stream.bytes_read / tokens)).c_str(),
                 format_bytes(plan.streamed_bytes_per_pass).c_str(), static_cast<unsigned long long>(c.forward_passes),
                 c.stream.io_seconds, emulated ? " (emulated)" : "",
                 c.stream.io_seconds > 0 ? c.stream.bytes_read / c.stream.io_seconds / 1e9 : 0.0,
                 emulated ? " (emulated)" : "", c.compute_seconds(), c.stream.io_stall_seconds,
                 c.forward_seconds > 0 ? 100.0 * c.stream.io_stall_seconds / c.forward_seconds : 0.0);
  }
}

// One object per speculative cycle: what the tree builder and the pruner did, and the time.
nlohmann::json cycles_json(const std::vector<CycleStats>& cycles) {
  nlohmann::json a = nlohmann::json::array();
  for (const CycleStats& c : cycles)
    a.push_back({{"tree_nodes", c.tree_nodes},
                 {"max_depth", c.max_depth},
                 {"rows_verified", c.rows_verified},
                 {"rows_pruned", c.rows_pruned},
                 {"accepted", c.accepted},
                 {"head_rows", c.head_rows},
                 {"context", c.context},
                 {"draft_seconds", c.draft_seconds},
                 {"verify_seconds", c.verify_seconds},
                 {"io_stall_seconds", c.io_stall_seconds}});
  return a;
}

nlohmann::json stats_json(const GenerationStats& s, const Session& session) {
  const int n_threads = const_cast<Session&>(session).pool().size();
  const SessionCounters& c = s.counters;
  const LayerStreamer* st = session.streamer();
  const bool spec = session.drafter() != nullptr;
  return {{"target_passes", spec ? s.spec.cycles : (s.generated_tokens > 0 ? s.generated_tokens : 0)},
          {"mean_accepted", s.mean_accepted()},
          {"draft_tokens", s.spec.draft_tokens},
          {"accepted_draft_tokens", s.spec.accepted_draft_tokens},
          {"rows_verified", s.spec.rows_verified},
          {"rows_pruned", s.spec.rows_pruned},
          {"max_tree_nodes", s.spec.max_tree_nodes},
          {"verify_io_stall_seconds", s.spec.verify_io_stall_seconds},
          {"method", spec ? SpecConfig::method_name(session.options().spec.method) : "none"},
          {"cycles", cycles_json(s.cycles)},
          {"head_rows_saved", s.spec.head_rows_saved},
          {"draft_seconds", s.spec.draft_seconds},
          {"verify_seconds", s.spec.verify_seconds},
          {"bytes_read", c.stream.bytes_read},
          {"bytes_read_per_token", s.generated_tokens > 0 ? c.stream.bytes_read / s.generated_tokens : 0},
          {"io_seconds", c.stream.io_seconds},
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
          {"generated_tokens", s.generated_tokens},
          {"prefill_tokens_per_s", s.prefill_tokens_per_s()},
          {"decode_tokens_per_s", s.decode_tokens_per_s()},
          {"prefill_seconds", s.prefill_seconds},
          {"decode_seconds", s.decode_seconds},
          {"load_seconds", s.load_seconds},
          {"peak_rss_bytes", s.peak_rss_bytes},
          {"threads", n_threads}};
}
}  // namespace

int run_command(int argc, char** argv) {
  CLI::App app{"Generate text from a prompt. The generated text goes to stdout; logs and statistics to stderr.",
               "specflash run"};
  SessionFlags session_flags;
  std::string prompt, prompt_file, stats_json_path;
  int n_predict = 128;
  SamplingParams sampling;
  sampling.seed = 0xC0FFEE;
  bool stats = false, ignore_eos = false, verbose = false, no_special = false;
  session_flags.add_to(app, /*model_required=*/false);
  app.add_option("-p,--prompt", prompt, "prompt text");
  app.add_option("-f,--file", prompt_file, "read the prompt from a file");
  app.add_option("-n,--n-predict", n_predict, "number of tokens to generate")->check(CLI::Range(0, 1 << 20));
  app.add_option("--temp", sampling.temperature, "temperature; 0 = greedy")->check(CLI::Range(0.0, 100.0));
  app.add_option("--top-k", sampling.top_k, "keep the k most likely tokens; 0 = off")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", sampling.top_p, "nucleus sampling threshold; 1 = off")->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-p", sampling.min_p, "drop tokens below min-p times the top probability; 0 = off")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--repeat-penalty", sampling.repeat_penalty, "penalise recently used tokens; 1 = off")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--seed", sampling.seed, "random seed (same seed, same text)");
  app.add_flag("--ignore-eos", ignore_eos, "keep generating past end-of-sequence tokens");
  app.add_flag("--no-special", no_special, "treat special-token text in the prompt as plain text");
  app.add_flag("--stats", stats, "print timing statistics to stderr");
  app.add_option("--stats-json", stats_json_path, "write statistics as one JSON object to this file");
  app.add_flag("-v,--verbose", verbose, "log progress to stderr");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  if (verbose) set_log_level(LogLevel::kInfo);

  if (!prompt_file.empty()) {
    std::ifstream in(prompt_file, std::ios::binary);
    if (!in) return fail(prompt_file + ": cannot open prompt file");
    std::stringstream ss;
    ss << in.rdbuf();
    prompt = ss.str();
  }

  auto options = session_flags.to_options();
  if (!options.ok()) return fail(options.status());
  auto session = Session::create(*options);
  if (!session.ok()) return fail(session.status());
  Session& s = **session;
  SF_LOG_INFO("loaded %s in %.2f s", options->model_path.c_str(), s.load_seconds());
  auto tokens = s.tokenize(prompt, !no_special);
  if (!tokens.ok()) return fail(tokens.status());
  if (static_cast<int>(tokens->size()) >= s.n_ctx())
    return fail(Status::Errorf("the prompt is %zu tokens long but the context holds %d; shorten it or raise --ctx-size",
                               tokens->size(), s.n_ctx()));

  auto result = s.generate(*tokens, n_predict, sampling, ignore_eos, [](int32_t, const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  });
  // Only the generated text goes to a pipe; a terminal gets a final newline for the prompt.
  if (isatty(fileno(stdout))) std::fputc('\n', stdout);
  if (!result.ok()) return fail(result.status());
  if (stats) print_stats(*result, s);
  if (!stats_json_path.empty()) {
    std::ofstream out(stats_json_path);
    if (!out) return fail(stats_json_path + ": cannot write statistics file");
    out << stats_json(*result, s).dump(2) << "\n";
  }
  return 0;
}

}  // namespace sf::cli
