// specflash speed: llama-bench's pp/tg measurements (bench/speed_test.h) with llama-bench's
// option names (-p, -n, -d, -r), so that one GGUF file can be timed by both tools with the
// same command line; scripts/llama_cpp_side_by_side.sh puts the two next to each other.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/speed_test.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/session_flags.h"
#include "engine/session.h"

namespace sf::cli {
int speed_command(int argc, char** argv) {
  CLI::App app{
      "Measure prompt processing (ppN: one N-token prompt) and text generation (tgN: N one-token steps)\n"
      "in tokens per second, optionally after a context of D tokens (-d), as llama.cpp's llama-bench does,\n"
      "on random token ids. Markdown table to stdout (median, min and max over the repetitions).",
      "specflash speed"};
  SessionFlags flags;
  flags.add_to(app, /*model_required=*/false);
  std::vector<int> prompts = {512}, gens = {128}, depths = {0};
  int repetitions = 5, max_batch = SessionOptions{}.max_batch;
  uint32_t seed = 1;
  std::string json_path;
  show_defaults_in_help(app);
  app.add_option("-p,--n-prompt", prompts, "prompt lengths, comma list (0: no pp test)")->delimiter(',');
  app.add_option("-n,--n-gen", gens, "generation lengths, comma list (0: no tg test)")->delimiter(',');
  app.add_option("-d,--n-depth", depths, "tokens of context before each test, comma list")->delimiter(',');
  app.add_option("-r,--repetitions", repetitions, "timed runs of every test, after one untimed warm-up")
      ->check(CLI::Range(1, 1000));
  app.add_option("-b,--batch-size", max_batch, "rows per forward pass; longer prompts are evaluated in chunks")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--seed", seed, "seed of the random token ids");
  app.add_option("--json", json_path, "also write every repetition's seconds as JSON to this file");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  if (!flags.draft_path.empty() || (!flags.spec.empty() && flags.spec != "none"))
    return usage_error(Status::Error("speed measures the model alone; drop --draft/--spec"));
  auto tests = bench::speed_tests(prompts, gens, depths);
  if (!tests.ok()) return usage_error(tests.status());
  flags.spec = "none";  // not the default (auto): plain passes only
  auto options = flags.to_options();
  if (!options.ok()) return usage_error(options.status());
  options->max_batch = max_batch;
  // Like llama-bench, a context just big enough for the longest test (unless -c gives one).
  if (options->n_ctx == 0)
    for (const bench::SpeedTest& t : *tests) options->n_ctx = std::max(options->n_ctx, t.depth + t.tokens());
  auto session = create_session_with_progress(*options);
  if (!session.ok()) return fail(session.status());
  Session& s = **session;

  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(options->model_path, ec);
  std::printf("speed: %s (%.1f MiB); %s; %d threads; batch %d; median of %d after 1 warm-up\n\n",
              options->model_path.c_str(), ec ? 0.0 : static_cast<double>(file_bytes) / (1 << 20),
              s.plan().describe().c_str(), s.pool().size(), max_batch, repetitions);
  // "core idle": the share of the time the calling thread waited at the ends of parallel
  // ops for the other threads (ThreadPool::Usage), i.e. how far from both cores busy.
  std::printf("| test | t/s | min t/s | max t/s | core idle |\n|---|---:|---:|---:|---:|\n");
  std::fflush(stdout);
  nlohmann::json rows = nlohmann::json::array();
  for (const bench::SpeedTest& t : *tests) {
    auto r = bench::measure_speed(s, t, repetitions, seed);
    if (!r.ok()) return fail(r.status());
    std::printf("| %s | %.2f | %.2f | %.2f | %.1f%% |\n", t.name().c_str(), r->median_tokens_per_second(),
                r->min_tokens_per_second(), r->max_tokens_per_second(), 100.0 * r->pool_wait_share());
    std::fflush(stdout);
    rows.push_back({{"test", t.name()},
                    {"n_prompt", t.n_prompt},
                    {"n_gen", t.n_gen},
                    {"n_depth", t.depth},
                    {"seconds", r->seconds},
                    {"tokens_per_second", r->tokens_per_second()},
                    {"median_tokens_per_second", r->median_tokens_per_second()},
                    {"parallel_ops", r->parallel_ops},
                    {"pool_wait_seconds", r->pool_wait_seconds}});
  }
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << nlohmann::json{{"model", options->model_path},
                        {"threads", s.pool().size()},
                        {"batch", max_batch},
                        {"repetitions", repetitions},
                        {"tests", rows}}
             .dump(2)
      << "\n";
    f.flush();
    if (!f) return fail(Status::Errorf("cannot write %s", json_path.c_str()));
  }
  return 0;
}

}  // namespace sf::cli
