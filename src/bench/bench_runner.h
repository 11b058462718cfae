// Runs the benchmark: one Session per (method, budget), reused across every prompt so that
// model loading is never timed, and each prompt's generated tokens and GenerationStats
// recorded. Prompts are tokenized once (every run uses the same target model) and, when
// too long for the context, truncated from the left.
//
// Peak RSS: the kernel's high-water mark is per process, so before each session is created
// the previous one is destroyed and the mark is reset (/proc/self/clear_refs), making each
// run's peak its own. Not thread-safe; runs sequentially.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/bench_config.h"
#include "bench/datasets.h"
#include "engine/session.h"

namespace sf::bench {

struct PreparedPrompt {
  Prompt prompt;
  std::vector<int32_t> ids;  // what every run is given (after chat template and truncation)
  int original_tokens = 0;   // before truncation
  bool truncated() const { return static_cast<int>(ids.size()) < original_tokens; }
};

struct PromptRun {
  size_t prompt = 0;            // index into BenchResult::prompts
  std::vector<int32_t> tokens;  // generated ids
  GenerationStats stats;
  std::optional<bool> equal_to_ar;  // unset when there is no ar run to compare with
};

// Facts about a run's session, for the report.
struct SessionInfo {
  int threads = 0;
  double load_seconds = 0;
  std::string residency;  // ResidencyPlan::describe()
  std::string io_backend = "none";
  bool direct_io = false;
  bool emulated_io = false;
  uint64_t resident_weight_bytes = 0;
  uint64_t streamed_bytes_per_pass = 0;
  uint64_t footprint_bytes = 0;
  uint64_t budget_bytes = 0;    // 0 = unlimited
  bool peak_rss_reset = false;  // false: peak RSS may include earlier runs
};

struct RunResult {
  BenchMethod method;
  BenchBudget budget;
  SessionInfo session;
  std::vector<PromptRun> prompts;
  int repetition = 0;  // 0-based: which of --repeat's passes over every run this was
};

struct BenchResult {
  std::vector<PreparedPrompt> prompts;
  std::vector<RunResult> runs;
  std::vector<std::string> notes;  // truncations and the like, also shown on stderr
  std::string target_description;  // "llama, 5 layers, 1.1 MiB"
  std::string chat_template;       // the template's name with --chat, else ""
};

struct BenchProgress {
  const BenchRunSpec* run = nullptr;
  size_t run_index = 0, n_runs = 0;  // over all repetitions
  size_t prompt = 0, n_prompts = 0;  // prompt == 0: the session is loading
  double tokens_per_s = 0;           // this run's decode rate so far
};

struct BenchCallbacks {
  std::function<void(const BenchProgress&)> progress;
  std::function<void(const std::string&)> note;
};

// Runs `runs` over `prompts`, config.repetitions times: each repetition runs every run in
// order with a fresh session (and its warm-up), so slow drift of a shared machine touches
// every method alike and the report can take medians. Errors (a model that fails to load, a failed generation)
// stop the benchmark and are returned.
Result<BenchResult> run_bench(const BenchConfig& config, const std::vector<BenchRunSpec>& runs,
                              const std::vector<Prompt>& prompts, const BenchCallbacks& callbacks);

}  // namespace sf::bench
