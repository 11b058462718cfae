// Configuration of speculative decoding for a Session, and its statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace sf {

// Early-exit pruning inside the verification pass (LEVER 4.3; tree_pruner.h).
struct PruneConfig {
  bool enabled = false;
  int exit_layer = -1;           // layers run before the exit; -1: half the target's layers
  float theta = 0.1f;            // edges whose normalised score is below theta may go
  std::string predictor_path;    // trained linear predictor; empty: the logit lens
  float temperature = 1.0f;      // tau_E of the normalisation within each candidate set
  int root_keep = 2;             // children of the root always kept (coverage near the root)
  float min_keep_share = 0.25f;  // pruning that keeps fewer of the tree's nodes is refused
  // Decide as if pruning, but verify every row (greedy only): measures how much of the
  // accepted length pruning would retain on the same trees (LEVER fig. 12).
  bool shadow = false;
};

// CATS self-speculation (cats_cycle.h): boundaries inside the target, and its adapters.
struct CatsConfig {
  int ldm = -1;                  // draft boundary L_DM (layers 1..L_DM draft); -1: from the budget
  int lsv = -1;                  // shallow-verifier boundary L_SV; -1: the pinned layers
  std::string draft_adapter;     // trained draft adapter (specflash train-adapter); "": plain exit head
  std::string verifier_adapter;  // trained shallow-verifier adapter; "": plain exit head
  int extra_branches = 0;        // draft's next-best tokens added as side branches at each position
};

// EdgeLLM (edgellm_tree_builder.h, provisional_generation.h). Each part can be switched off
// for the paper's ablation (fig. 22); `bld` is a baseline built from the same parts.
struct EdgeLlmConfig {
  float alpha = 0.01f;  // initial verification threshold on the tree-cumulative confidence
  // Bounds on the adapted alpha. The paper's update divides by a power of T_c, which after
  // one bad cycle can jump alpha by 10-100x; the upper bound keeps trees from collapsing to
  // a token or two where a verification pass costs tens of draft steps.
  float alpha_min = 1e-5f;
  float alpha_max = 0.05f;
  bool pacer = true;  // confidence-paced branches; off: one chain (the top branch only)
  // Beyond the paper: the pacer's confidences are the calibrated chances of acceptance
  // (LEVER's calibration, learned online from the verified rows) rather than the raw draft
  // probabilities, so branch lengths follow what the target accepts. Off: raw probabilities,
  // as the paper. With the paced shape the fallback's T_c stays on the raw probabilities
  // either way (the most likely shape reads it on the calibrated chances).
  bool calibrated_pacer = true;
  // How the tree grows, one node a step, among the steps the cost stop lets pay.
  //  kMostLikely (the default, beyond the paper): add the node whose whole path the target
  //    is most likely to accept (the calibrated chance), the order that gives a tree of any
  //    size the most expected accepted tokens when acceptances are independent (LEVER's and
  //    opt-tree's builders grow the same way); the fallback's T_c is read on the same
  //    calibrated chances. It serves the paper's own premise (a likelier branch is explored
  //    further) exactly where the pacer's L_i = C_i * M approximates it.
  //  kPaced: the paper's branch pacer (extend the branch furthest below its target length
  //    M * C_i); `--edgellm-shape paced`, bench method edgellm-paced.
  //    On stories260K at 0% at this disk's speed the paced trees sat level with chain:8 in
  //    every run of record and paired run, while the most likely shape beat chain:8 in 18 of
  //    19 paired runs (by a few percent; 1.58x where the pass is I/O-bound), the rest of
  //    EdgeLLM unchanged (docs/edgellm.md, "The default shape"); so the default grows the most
  //    likely node.
  enum class Shape { kPaced, kMostLikely };
  Shape shape = Shape::kMostLikely;
  bool fallback = true;   // verify when T_c < alpha (self-adaptive); off: at a fixed tree size
  int fixed_tokens = 16;  // tree size at which verification starts when the fallback is off
  // Beyond the paper: also verify when the pacer's next step would lower the tree's
  // expected tokens per second (its expected tokens over the measured cost of its drafting
  // and of a pass over its rows). The paper's regime (a pass costs tens of draft steps and
  // rows are free while it waits on I/O) never triggers it; where a pass costs only a few
  // draft steps it stops the trees that would not pay for their drafting.
  bool cost_stop = true;
  // Beyond the paper: the tree's size bound is also chosen by measurement. Caps of 8 and 16
  // nodes and none are arms of a selector (size_cap_selector.h) scored by the tokens per
  // second their cycles realise, each cycle's tokens read off for every cap it covers; the pacer, fallback
  // and cost stop shape each tree under the cap. The cost stop's step costs come from a
  // profile measured without the cycle around it (the drafting that delays the next pass's
  // reads, the I/O thread's work beside the compute), and on this project's VM a tree it
  // judged worth 25 nodes realised less per second than a chain of 8.
  bool measured_size = true;
  bool provisional = true;  // draft during the target's I/O waits
  // Lend the waits only where the drafting between passes runs past the target's pending
  // read-ahead (by more than kExposedDraftShare of a cycle, edgellm_tree_builder.h): a
  // carried chain saves the next cycle's drafting, which saves time only where that
  // drafting is not already hidden behind I/O. Off: the measured switch alone decides (the
  // tests of the mechanism, which need it to lend).
  bool lend_only_exposed = true;
  int provisional_max = 16;  // the most provisional tokens per verification (their memory bound)
  // The provisional chain also stops where its confidence below its first token (the next
  // root) falls under alpha: the next tree would send it to verification right away.
  // BiLD-style baseline: one chain that stops when a single token's draft probability is
  // below this fixed threshold (0: off). Replaces the adaptive fallback when set.
  float token_threshold = 0;
};

// Retrieval drafting (coordgen, sam, pld; retrieval_drafter.h).
struct RetrievalConfig {
  bool calibrate = true;    // coordgen: calibration from the prefill's logits
  bool reuse = true;        // coordgen: reuse of rejected draft tails
  std::string history_dir;  // coordgen: persistent history store (empty: none)
  std::string history_task = "default";
  uint64_t history_max_tokens = 1 << 20;
  bool history_clear = false;  // empty the store when the session starts
};

// Mirror-SD (mirror_rollout.h): at an early-exit layer of the verification pass the
// target's top-kappa tokens (logit lens) seed rollouts of the next window, drafted on the
// draft's own threads while the target computes its remaining layers.
struct MirrorConfig {
  int exit_layer = -1;    // layers run before the token channel; -1: exit_percent of the depth
  int exit_percent = 50;  // used when exit_layer < 0 (the paper's default l_e = N/2)
  int kappa = 8;          // candidates per rollout anchor (the paper's default)
};

struct SpecConfig {
  // kCoordGen, kPld and kSam draft by retrieval and need no draft model (with one,
  // coordgen merges both into each tree); kCats and kKangaroo draft with the target's own
  // layers.
  enum class Method {
    kNone,
    kChain,
    kTree,
    kOptTree,
    kLever,
    kEdgeLlm,
    kCoordGen,
    kPld,
    kSam,
    kCats,
    kKangaroo,
    kMirror,
    // Chooses among plain decoding and several tree builders online by measured speed
    // (auto_tree_builder.h); drafts with the draft model, or by retrieval without one.
    kAuto
  };
  Method method = Method::kNone;
  std::string draft_model_path;  // a GGUF with the target's vocabulary
  int draft_len = 4;             // chain: tokens per draft (gamma); tree: depth
  // Tree: children per node at each depth (e.g. {3, 2, 1}); empty = {2, 2, ..., 1}.
  std::vector<int> tree_widths;
  int node_budget = 16;     // opt-tree: nodes per tree
  int max_tree_nodes = 64;  // lever, edgellm: the most nodes a tree may grow to
  int max_tree_depth = 12;  // opt-tree, lever, edgellm
  // auto: the most of the run's time that trying arms other than the best may lose
  // (ArmSelectorOptions::explore_share; the bench's auto:PERCENT).
  double auto_explore_share = 0.03;
  // auto: the directory where what auto measured is kept between runs, one file per
  // setting (auto_profile.h); empty: every session starts afresh. The CLI's default is
  // default_auto_profile_directory().
  std::string auto_profile_dir;
  PruneConfig prune;          // lever
  EdgeLlmConfig edgellm;      // edgellm
  MirrorConfig mirror;        // mirror (its window is a chain of draft_len tokens)
  std::string profile_path;   // lever: a latency profile from `specflash profile` (else measured at start)
  int draft_threads = 0;      // 0: share the target's pool (edgellm, mirror: threads of the draft's own)
  RetrievalConfig retrieval;  // coordgen, pld, sam
  CatsConfig cats;            // cats, kangaroo (draft_len is their gamma)
  // chain, as llama.cpp's --draft-min / --draft-p-min (confident_chain_builder.h): stop a
  // chain where the draft's top probability is below draft_p_min (0: never), and decode a
  // cycle whose chain is shorter than draft_min without speculation (0: never).
  int draft_min = 0;
  float draft_p_min = 0;

  bool enabled() const { return method != Method::kNone; }
  // Methods that draft with the target's own layers (no draft model).
  bool self_speculative() const { return method == Method::kCats || method == Method::kKangaroo; }
  static const char* method_name(Method m);
  // Whether the method drafts by retrieval (and so needs no draft model).
  static bool is_retrieval(Method m) { return m == Method::kCoordGen || m == Method::kPld || m == Method::kSam; }
  // Whether this config drafts by retrieval: a retrieval method, or auto (alone without a
  // draft model, beside it with one).
  bool drafts_by_retrieval() const { return is_retrieval(method) || method == Method::kAuto; }
  // Whether the session prunes trees at an early exit (LEVER's pruner): lever unless
  // switched off, and auto's LEVER arm when it drafts with a draft model.
  bool prunes() const {
    return (method == Method::kLever && (prune.enabled || prune.shadow)) ||
           (method == Method::kAuto && !draft_model_path.empty());
  }
};

// Children per node at each depth for a config: chain = {1} x draft_len; tree = the given
// widths, or {2} x (draft_len - 1) + {1}.
std::vector<int> tree_widths(const SpecConfig& config);
// Rejects sizes that are zero or absurd and thresholds out of range, with a message naming
// the flag. (The exit layer is checked against the model when the session is created.)
Status validate_spec_config(const SpecConfig& config);
// Total nodes of a full tree with these widths.
int64_t tree_node_count(const std::vector<int>& widths);
// The most nodes a tree of this config can have (the verification batch is one more row).
int64_t max_tree_size(const SpecConfig& config);

struct SpecStats {
  uint64_t cycles = 0;                 // draft + verify rounds
  uint64_t draft_tokens = 0;           // tree nodes proposed
  uint64_t accepted_draft_tokens = 0;  // proposed nodes on accepted paths
  uint64_t rows_verified = 0;          // rows of verification batches (pending + nodes)
  uint64_t rows_pruned = 0;            // of those, rows dropped at the early-exit layer
  uint64_t head_rows = 0;              // rows whose LM head was computed
  uint64_t head_rows_saved = 0;        // rows whose LM head was skipped (LEVER 4.4)
  uint64_t max_tree_nodes = 0;         // largest tree proposed
  uint64_t shadow_rows_kept = 0;       // shadow pruning: rows the decisions would have kept
  uint64_t shadow_accepted = 0;        // shadow pruning: accepted nodes that would have been kept
  double draft_seconds = 0;
  double verify_seconds = 0;
  double verify_io_stall_seconds = 0;  // part of verify_seconds waiting for streamed weights
  // CATS: shallow-verifier disagreements (correction branches) and accepted corrections.
  uint64_t corrections = 0;
  uint64_t accepted_corrections = 0;
  // EdgeLLM's provisional generation: draft tokens produced by the worker while the target
  // waited for weights, those the verification confirmed (kept: the bonus token and the
  // drafts below it, which start the next tree), the worker's draft time, and the time the
  // cores were lent to it (the target's I/O waits during those passes).
  uint64_t provisional_cycles = 0;  // cycles that lent the waits (EdgeLLM's MeasuredSwitch's choice)
  uint64_t provisional_tokens = 0;
  uint64_t provisional_kept = 0;
  double provisional_seconds = 0;
  double provisional_lent_seconds = 0;
  // Mirror-SD: cycles that launched rollouts, those whose corrected prefix lay on the
  // hypothesis tree (reuse) and those that fell back to a fresh draft; rollout tokens
  // drafted and carried into the next window; the latency terms summed over cycles.
  uint64_t mirror_cycles = 0;
  uint64_t mirror_reused = 0;
  uint64_t mirror_fallbacks = 0;
  uint64_t rollout_tokens = 0;
  uint64_t rollout_kept = 0;
  double prefix_seconds = 0;
  double channel_seconds = 0;
  double suffix_seconds = 0;
  double rollout_seconds = 0;
  double model_seconds = 0;  // sum of each cycle's T = T_prefix + T_ch + max(T_suffix, T_draft) + T_rest
};

}  // namespace sf
