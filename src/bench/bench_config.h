// What `specflash bench` measures: the decoding methods, the memory budgets, the prompts'
// sources and the generation settings, parsed from flag values and checked before any
// model is loaded, so a typo fails in milliseconds instead of after a long run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "bench/datasets.h"
#include "engine/session.h"
#include "sampling/sampler.h"
#include "weights/memory_budget.h"

namespace sf::bench {

enum class BenchMethod {
  kAr,       // plain decoding, everything resident (the budget does not apply)
  kFlashAr,  // plain decoding under the budget: the streamed baseline for speedups
  kChain,    // speculative, one draft chain per cycle
  kTree,     // speculative, a token tree per cycle
};

const char* method_name(BenchMethod m);
// "ar,flash-ar,chain,tree" (any order, duplicates ignored); error names the unknown one.
Result<std::vector<BenchMethod>> parse_methods(std::string_view text);

struct BenchBudget {
  std::string label;  // as the user wrote it ("50%"), or "resident" for ar
  MemoryBudget budget;
};
// "100%,50%,0%" or absolute sizes ("300M"); each must parse as --mem-budget does.
Result<std::vector<BenchBudget>> parse_budgets(std::string_view text);
// "3,2,1": children per node at each tree depth, each >= 1.
Result<std::vector<int>> parse_tree_widths(std::string_view text);

struct BenchConfig {
  std::vector<BenchMethod> methods;
  std::vector<BenchBudget> budgets;
  std::vector<DatasetSpec> datasets;  // ignored when prompt_file is set
  std::string prompt_file;
  std::string data_dir;
  int n_predict = 64;
  SamplingParams sampling;  // greedy unless --temp > 0
  bool ignore_eos = false;
  bool chat = false;          // wrap prompts in a chat template as the user's message
  std::string chat_template;  // by name; "" = the model's own
  bool compare_to_ar = true;  // run ar and check every method's tokens against it
  int warmup = 0;             // untimed generations per session before measuring
  std::string draft_model_path;
  int draft_len = 4;
  std::vector<int> tree_widths;
  bool per_category = false;
};

// Checks the combination: at least one method and budget, a draft model for chain and
// tree, positive n_predict. Errors are usage errors (exit code 2).
Status validate(const BenchConfig& config);

// One run of the benchmark: a method at a budget, with its session options.
struct BenchRunSpec {
  BenchMethod method;
  BenchBudget budget;
  SessionOptions options;
};

// The runs in execution order: ar first (when listed or when comparing to it), then for
// each budget flash-ar, chain, tree, so a method's baseline has always run before it.
// `base` carries the shared session flags (model, threads, context, I/O).
std::vector<BenchRunSpec> plan_runs(const BenchConfig& config, const SessionOptions& base);

// Rows a verification batch may add beyond the committed sequence: the draft chain or
// tree plus the pending token. Prompts are truncated so that this and n_predict fit.
int spec_context_margin(const BenchConfig& config);

}  // namespace sf::bench
