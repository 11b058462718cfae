// specflash run: generate text from a prompt, streaming it to stdout.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "base/log.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "engine/session.h"

namespace sf::cli {

namespace {
void print_stats(const GenerationStats& s, int n_threads) {
  std::fprintf(stderr,
               "\n--- stats ---\n"
               "threads:          %d\n"
               "load:             %.3f s\n"
               "prompt tokens:    %d  (%.1f tokens/s prefill, %.3f s)\n"
               "generated tokens: %d  (%.2f tokens/s decode, %.3f s)\n"
               "peak RSS:         %.1f MiB\n",
               n_threads, s.load_seconds, s.prompt_tokens, s.prefill_tokens_per_s(), s.prefill_seconds,
               s.generated_tokens, s.decode_tokens_per_s(), s.decode_seconds, s.peak_rss_bytes / 1048576.0);
}

nlohmann::json stats_json(const GenerationStats& s, int n_threads) {
  return {{"prompt_tokens", s.prompt_tokens},
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
  SessionOptions options;
  options.model_path = default_model_path();
  std::string prompt, prompt_file, stats_json_path;
  int n_predict = 128;
  SamplingParams sampling;
  sampling.seed = 0xC0FFEE;
  bool stats = false, ignore_eos = false, verbose = false, no_special = false;
  app.add_option("-m,--model", options.model_path, "GGUF model file (default: the embedded stories260K)");
  app.add_option("-p,--prompt", prompt, "prompt text");
  app.add_option("-f,--file", prompt_file, "read the prompt from a file");
  app.add_option("-n,--n-predict", n_predict, "number of tokens to generate")->check(CLI::Range(0, 1 << 20));
  app.add_option("-t,--threads", options.n_threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("-c,--ctx-size", options.n_ctx, "context size in tokens (default: min(trained, 4096))")->check(CLI::Range(0, 1 << 22));
  app.add_option("--temp", sampling.temperature, "temperature; 0 = greedy")->check(CLI::Range(0.0, 100.0));
  app.add_option("--top-k", sampling.top_k, "keep the k most likely tokens; 0 = off")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", sampling.top_p, "nucleus sampling threshold; 1 = off")->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-p", sampling.min_p, "drop tokens below min-p times the top probability; 0 = off")->check(CLI::Range(0.0, 1.0));
  app.add_option("--repeat-penalty", sampling.repeat_penalty, "penalise recently used tokens; 1 = off")->check(CLI::Range(0.0, 10.0));
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

  auto session = Session::create(options);
  if (!session.ok()) return fail(session.status());
  Session& s = **session;
  SF_LOG_INFO("loaded %s in %.2f s", options.model_path.c_str(), s.load_seconds());
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
  if (stats) print_stats(*result, s.pool().size());
  if (!stats_json_path.empty()) {
    std::ofstream out(stats_json_path);
    if (!out) return fail(stats_json_path + ": cannot write statistics file");
    out << stats_json(*result, s.pool().size()).dump(2) << "\n";
  }
  return 0;
}

}  // namespace sf::cli
