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

// A decoding method as `--methods` names it: "ar", "flash-ar", "chain" (or "chain:8" for
// gamma 8), "tree", "opt-tree" (or "opt-tree:32" for a 32-node budget), "lever" (gain/cost
// trees with early-exit pruning) and "lever-noprune"; "edgellm" and its ablations
// (-nopacer, -nofallback, -noprovisional) and "bld" (BiLD-style fixed confidence threshold,
// "bld:30" for 0.30).
struct BenchMethod {
  enum class Kind {
    kAr,                    // plain decoding, everything resident (the budget does not apply)
    kFlashAr,               // plain decoding under the budget: the streamed baseline for speedups
    kChain,                 // speculative, one draft chain per cycle
    kTree,                  // speculative, a static token tree per cycle (SpecInfer-style)
    kOptTree,               // speculative, the tree of maximum expected accepted length for a node budget
    kLever,                 // LEVER: gain/cost tree + early-exit pruning
    kLeverNoPrune,          // LEVER's trees, every row verified in full
    kLeverShadow,           // LEVER's trees, pruning decided but not applied: retention (greedy)
    kEdgeLlm,               // EdgeLLM: paced tree, adaptive fallback, provisional drafting during I/O
    kEdgeLlmNoPacer,        // ... one chain instead of the paced tree
    kEdgeLlmNoFallback,     // ... verification at a fixed tree size instead of T_c < alpha
    kEdgeLlmNoProvisional,  // ... no drafting during the target's I/O
    kEdgeLlmNoCost,         // ... without the cost stop (the paper's tree growth: T_c < alpha only)
    kEdgeLlmNoSize,         // ... without the measured size bound (its caps chosen by realised rate)
    kEdgeLlmRawConf,        // ... the paper's pacer exactly: the paced shape on raw draft probabilities
    kEdgeLlmPaced,          // ... the paper's branch pacer shapes the tree instead of the most likely node
    kBld,                   // BiLD-style chain: stop at the first token below a fixed confidence
    // Retrieval drafting (no draft model): CoordGen, its ablations and the baselines.
    kCoordGen,         // suffix-automaton trees + calibration + draft reuse (+ history with --history-dir)
    kCoordGenNoCalib,  // without the calibration from the prefill's logits
    kCoordGenNoReuse,  // without the reuse of rejected tails
    kCoordGenHybrid,   // coordgen merged with the draft model (--draft) in one tree
    kPld,              // prompt lookup decoding: one n-gram chain
    kSam,              // SAM-style: one chain from the longest suffix match, no calibration
    // Self-speculation, no draft model (param: gamma). cats: with the trained adapters
    // (--cats-draft-adapter, --cats-verifier-adapter); cats-noadapter: the plain exit head;
    // kangaroo: shallow draft + draft adapter, full-model verification.
    kCats,
    kCatsNoAdapter,
    kKangaroo,
    kMirror,  // Mirror-SD: rollouts from the early-exit top-kappa beside the target's pass
    // --spec auto: picks plain decoding, LEVER or a chain (retrieval trees without --draft)
    // online by measured speed (auto_tree_builder.h).
    kAuto,
    // auto starting afresh in every session (no profile kept between them), as a first run
    // on a new machine or model does.
    kAutoCold,
  };
  Kind kind = Kind::kAr;
  int param = 0;  // chain: gamma; opt-tree: node budget; bld: threshold in %; mirror: kappa; 0 = the default
  // mirror: the exit layer (> 0) or minus a percentage of the depth (< 0); 0 = the default.
  // "mirror:8@11" is kappa 8 at layer 11, "mirror:4@25%" kappa 4 at a quarter of the depth.
  int param2 = 0;

  static const BenchMethod kAr, kFlashAr, kChain, kTree, kOptTree, kLever, kLeverNoPrune, kLeverShadow;
  bool operator==(const BenchMethod& o) const { return kind == o.kind && param == o.param && param2 == o.param2; }
  bool speculative() const { return kind != Kind::kAr && kind != Kind::kFlashAr; }
};
inline constexpr BenchMethod BenchMethod::kAr{BenchMethod::Kind::kAr, 0};
inline constexpr BenchMethod BenchMethod::kFlashAr{BenchMethod::Kind::kFlashAr, 0};
inline constexpr BenchMethod BenchMethod::kChain{BenchMethod::Kind::kChain, 0};
inline constexpr BenchMethod BenchMethod::kTree{BenchMethod::Kind::kTree, 0};
inline constexpr BenchMethod BenchMethod::kOptTree{BenchMethod::Kind::kOptTree, 0};
inline constexpr BenchMethod BenchMethod::kLever{BenchMethod::Kind::kLever, 0};
inline constexpr BenchMethod BenchMethod::kLeverNoPrune{BenchMethod::Kind::kLeverNoPrune, 0};
inline constexpr BenchMethod BenchMethod::kLeverShadow{BenchMethod::Kind::kLeverShadow, 0};

std::string method_name(BenchMethod m);
// "ar,flash-ar,chain:4,chain:8,tree,lever" (any order, duplicates ignored); the error
// names the unknown one.
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
  int repetitions = 1;        // passes over every run; the report gives each row's median
  std::string draft_model_path;
  int draft_len = 4;
  std::vector<int> tree_widths;
  int node_budget = 16;     // opt-tree
  int max_tree_nodes = 64;  // lever
  PruneConfig prune;        // lever (enabled by the method)
  EdgeLlmConfig edgellm;    // edgellm (the ablations switch parts off)
  // coordgen methods: the history store's settings (the method sets the rest).
  RetrievalConfig retrieval;
  MirrorConfig mirror;    // mirror (the method's kappa and exit override these)
  int draft_threads = 0;  // mirror: the draft's thread group (0: a quarter of the cores)
  std::string profile_path;
  // auto: where its sessions keep what they learnt (SpecConfig::auto_profile_dir); the bench
  // command gives each bench run a fresh directory unless told otherwise. auto-cold ignores it;
  // auto:N keeps its own in a subdirectory (explore-Npct).
  std::string auto_profile_dir;
  bool per_category = false;
  CatsConfig cats;  // cats, cats-noadapter (no adapters), kangaroo (no verifier adapter)
};

// The session's speculative configuration for a method.
SpecConfig spec_for(const BenchConfig& config, BenchMethod method);

// Checks the combination: at least one method and budget, a draft model for the
// speculative methods, positive n_predict. Errors are usage errors (exit code 2).
Status validate(const BenchConfig& config);

// One run of the benchmark: a method at a budget, with its session options.
struct BenchRunSpec {
  BenchMethod method;
  BenchBudget budget;
  SessionOptions options;
};

// The runs in execution order: ar first (when listed or when comparing to it), then for
// each budget flash-ar and the speculative methods in the order listed, so a method's
// baseline has always run before it.
// `base` carries the shared session flags (model, threads, context, I/O).
std::vector<BenchRunSpec> plan_runs(const BenchConfig& config, const SessionOptions& base);

// Rows a verification batch may add beyond the committed sequence: the draft chain or
// tree plus the pending token. Prompts are truncated so that this and n_predict fit.
int spec_context_margin(const BenchConfig& config);

}  // namespace sf::bench
