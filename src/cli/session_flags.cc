#include "cli/session_flags.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "cli/default_model.h"
#include "spec/auto_profile.h"

namespace sf::cli {

void SessionFlags::add_to(CLI::App& app, bool model_required) {
  auto* m = app.add_option("-m,--model", model_path,
                           model_required ? "GGUF model file" : "GGUF model file (default: the embedded stories260K)");
  if (model_required)
    m->required();
  else
    model_path = default_model_path();
  app.add_option("-t,--threads", n_threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("-c,--ctx-size", n_ctx, "context size in tokens (default: min(trained, 4096))")
      ->check(CLI::Range(0, 1 << 22));
  app.add_option("--mem-budget", mem_budget,
                 "DRAM budget: bytes for the whole footprint (300M, 2G) or the share of the layer weights to pin "
                 "(25%; the embeddings and the LM head stay resident on top); the rest streams from storage every "
                 "pass (default: everything resident)");
  app.add_option("--io-bandwidth", io_bandwidth,
                 "EMULATE storage of this read rate in bytes/s (4G ~ UFS 4.0, 2G ~ UFS 3.1); default: the real device");
  app.add_option("--stream-buffers", stream_buffers, "layer buffers in the streaming ring (>= 1; 2 double-buffers)")
      ->check(CLI::Range(1, 64));
  app.add_option("--io-backend", io_backend, "streaming reads: auto, io_uring or pread")
      ->check(CLI::IsMember({"auto", "io_uring", "pread"}));
  app.add_option("--draft", draft_path, "draft model for speculative decoding (same vocabulary as the target)");
  app.add_option("--spec", spec,
                 "speculative method: none, chain, tree (static widths), opt-tree (best tree for a node budget), "
                 "lever (gain/cost trees + early-exit pruning), edgellm (confidence-shaped trees, adaptive "
                 "verification, drafting during the target's I/O), mirror (Mirror-SD: rollouts of the next window "
                 "from the target's early-exit top-k, drafted in parallel with its later layers); coordgen "
                 "(retrieval from the context, no draft model needed; with --draft a hybrid), pld and sam (retrieval "
                 "baselines); cats or kangaroo draft with the target's own first layers, no --draft; auto picks among "
                 "plain decoding, LEVER's and EdgeLLM's trees, chains, Mirror-SD's window (on 4+ cores) and retrieval "
                 "trees (without --draft: plain decoding and retrieval trees) by their measured speed (default: auto; "
                 "chain when --draft-min or --draft-p-min is given)")
      ->check(CLI::IsMember({"none", "chain", "tree", "opt-tree", "lever", "edgellm", "mirror", "coordgen", "pld",
                             "sam", "cats", "kangaroo", "auto"}));
  app.add_option("--draft-len", draft_len, "chain: tokens drafted per cycle (gamma); tree: depth (default 4)");
  app.add_option("--tree-widths", tree_widths, "tree: children per node at each depth, e.g. 3,2,1");
  app.add_option("--node-budget", node_budget, "opt-tree, coordgen, pld, sam: nodes per tree (default 16)");
  app.add_option("--max-tree-nodes", max_tree_nodes, "lever: the most nodes a tree may grow to (1..255, default 64)");
  app.add_option("--lever-exit-layer", lever_exit_layer,
                 "lever: prune after this many target layers (1..layers-1; default: half the layers)");
  app.add_option("--lever-theta", lever_theta,
                 "lever: prune tree edges whose normalised exit score is below this (0..1, default 0.1)");
  app.add_option("--lever-predictor", lever_predictor,
                 "lever: trained exit predictor (specflash train-predictor); default: the logit lens");
  app.add_flag("--lever-no-prune", lever_no_prune, "lever: gain/cost trees without early-exit pruning");
  app.add_option("--cats-ldm", cats_ldm,
                 "cats/kangaroo: draft with layers 1..L_DM (default: about a tenth of the layers)");
  app.add_option("--cats-lsv", cats_lsv,
                 "cats: shallow verifier runs layers L_DM+1..L_SV (default: the layers the budget pins)");
  app.add_option("--cats-branches", cats_branches,
                 "cats/kangaroo: the draft's next-best tokens added as side branches per position (0..8, default 0)");
  app.add_option("--cats-draft-adapter", cats_draft_adapter,
                 "cats/kangaroo: draft adapter from `specflash train-adapter --role draft` (default: the plain exit "
                 "head; its layer is the default --cats-ldm)");
  app.add_option("--cats-verifier-adapter", cats_verifier_adapter,
                 "cats: shallow-verifier adapter from `specflash train-adapter --role verifier` (its layer is the "
                 "default --cats-lsv)");
  app.add_option("--edgellm-alpha", edgellm_alpha,
                 "edgellm: initial verification threshold on the tree's cumulative confidence (0..1, default 0.01; "
                 "it adapts after every verification)");
  app.add_flag("--edgellm-no-provisional", edgellm_no_provisional,
               "edgellm: do not draft while the target waits for streamed weights");
  app.add_option("--edgellm-shape", edgellm_shape,
                 "edgellm: how the tree grows: likely (each step adds the node most likely to be accepted, default) or "
                 "paced (the paper's confidence-based branch pacer)")
      ->check(CLI::IsMember({"paced", "likely"}));
  app.add_flag("--coordgen-no-calib", coordgen_no_calib, "coordgen: no calibration from the prefill's logits");
  app.add_flag("--coordgen-no-reuse", coordgen_no_reuse, "coordgen: no reuse of rejected draft tails");
  app.add_option("--history-dir", history_dir,
                 "coordgen: keep a persistent store of past outputs here (opt-in; files are owner-only)");
  app.add_option("--history-task", history_task, "coordgen: the store's task or app name (default: default)");
  app.add_option("--history-max-tokens", history_max_tokens, "coordgen: the store's bound in tokens (default 1M)")
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--history-clear", history_clear, "coordgen: empty the store before starting");
  app.add_option("--mirror-exit-layer", mirror_exit_layer,
                 "mirror: the token channel taps the target after this many layers (1..layers-1; default: half)");
  app.add_option("--mirror-kappa", mirror_kappa, "mirror: candidate tokens rolled out per cycle (1..32, default 8)");
  app.add_option("--draft-threads", draft_threads,
                 "mirror, edgellm: threads of the draft's own group (mirror: the target gets the rest; default: a "
                 "quarter of the cores, >= 1; edgellm: default 1)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--latency-profile", latency_profile,
                 "lever: verification latency profile from `specflash profile` (default: measured at start-up)");
  app.add_option("--auto-profile-dir", auto_profile_dir,
                 "auto: keep what it measured here, one small file per model, budget and storage, so the next run "
                 "starts from it (default: $XDG_CACHE_HOME/specflash/auto or ~/.cache/specflash/auto; none: start "
                 "afresh every run)");

  // llama.cpp spellings of the same settings (-md is rewritten to --model-draft before
  // parsing, see llama_compat.h), kept apart so the table above stays specflash's own.
  app.add_option("--model-draft", draft_path, "llama.cpp's name for --draft (also -md)")->group("llama.cpp names");
  app.add_option("--draft-max", draft_len, "llama.cpp's name for --draft-len")->group("llama.cpp names");
  app.add_option("--draft-min", draft_min,
                 "chain: a cycle whose draft is shorter than this decodes without speculation (0..--draft-max, "
                 "default 0; drafts end early only with --draft-p-min or at the end of the context)")
      ->check(CLI::Range(0, 1 << 10))
      ->group("llama.cpp names");
  app.add_option("--draft-p-min", draft_p_min,
                 "chain: stop drafting where the draft's top token has probability below this (0..1; llama.cpp's "
                 "default is 0.75; not given: every cycle drafts --draft-max tokens)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->group("llama.cpp names");
  gpu_only.add_to(app);
}

void SessionFlags::print_notes() const {
  gpu_only.note_ignored();
  const std::string m = method();
  if (spec.empty() && repeatable_sampling && m != "auto")
    std::fprintf(stderr,
                 "note: sampling with a fixed --seed: the default method is %s, so the run repeats (--spec auto "
                 "adapts to timings, and its tokens for a seed vary)\n",
                 m.c_str());
  if (m == "none" && !draft_path.empty())
    std::fprintf(stderr, "note: --spec none: the draft model %s is not used (plain decoding)\n", draft_path.c_str());
  if ((draft_min > 0 || draft_p_min >= 0) && m != "chain" && m != "none")
    std::fprintf(stderr, "note: --draft-min and --draft-p-min apply to --spec chain; --spec %s ignores them\n",
                 m.c_str());
}

// Without --spec: auto, which picks among plain decoding and the papers' policies (retrieval
// trees without a draft) by their measured speed on this machine (auto_tree_builder.h), so
// the default is never much slower than plain decoding. llama.cpp's chain knobs
// (--draft-min, --draft-p-min) ask for its chain.
// A fixed --seed with sampling asks for a repeatable run, which auto cannot give (see
// repeatable_sampling): chain with a draft, plain decoding without.
std::string default_method_for(const SessionFlags& flags) {
  if (!flags.draft_path.empty() && (flags.draft_min > 0 || flags.draft_p_min >= 0)) return "chain";
  if (flags.repeatable_sampling) return flags.draft_path.empty() ? "none" : "chain";
  return "auto";
}

EdgeLlmConfig::Shape edgellm_shape_of(const std::string& name) {
  return name == "likely" ? EdgeLlmConfig::Shape::kMostLikely : EdgeLlmConfig::Shape::kPaced;
}

std::string SessionFlags::method() const { return spec.empty() ? default_method_for(*this) : spec; }

Result<SessionOptions> SessionFlags::to_options() const {
  SessionOptions o;
  o.model_path = model_path;
  o.n_threads = n_threads;
  o.n_ctx = n_ctx;
  o.stream_buffers = stream_buffers;
  SF_ASSIGN_OR_RETURN(o.mem_budget, MemoryBudget::parse(mem_budget));
  if (!io_bandwidth.empty()) {
    SF_ASSIGN_OR_RETURN(o.io_bandwidth, parse_bandwidth(io_bandwidth));
  }
  if (io_backend == "io_uring") o.io.backend = DirectReaderOptions::Backend::kIoUring;
  if (io_backend == "pread") o.io.backend = DirectReaderOptions::Backend::kPread;
  if (draft_min > draft_len)
    return Status::Errorf("--draft-min %d is larger than --draft-max/--draft-len %d", draft_min, draft_len);
  if (method() != "none") {
    SF_ASSIGN_OR_RETURN(o.spec, spec_config());
  }
  return o;
}

}  // namespace sf::cli

namespace sf::cli {

Result<SpecConfig> SessionFlags::spec_config() const {
  SpecConfig c;
  using M = SpecConfig::Method;
  // Deliberately hides the member: below, `spec` is --spec with the default applied.
  const std::string spec = method();
  c.method = spec == "tree"       ? M::kTree
             : spec == "opt-tree" ? M::kOptTree
             : spec == "lever"    ? M::kLever
             : spec == "edgellm"  ? M::kEdgeLlm
             : spec == "cats"     ? M::kCats
             : spec == "kangaroo" ? M::kKangaroo
             : spec == "mirror"   ? M::kMirror
                                  : M::kChain;
  if (spec == "coordgen") c.method = M::kCoordGen;
  if (spec == "pld") c.method = M::kPld;
  if (spec == "sam") c.method = M::kSam;
  if (spec == "auto") c.method = M::kAuto;
  c.retrieval.calibrate = !coordgen_no_calib;
  c.retrieval.reuse = !coordgen_no_reuse;
  c.retrieval.history_dir = history_dir;
  c.retrieval.history_task = history_task;
  c.retrieval.history_max_tokens = static_cast<uint64_t>(history_max_tokens);
  c.retrieval.history_clear = history_clear;
  c.cats.ldm = cats_ldm;
  c.cats.lsv = cats_lsv;
  c.cats.extra_branches = cats_branches;
  c.cats.draft_adapter = cats_draft_adapter;
  c.cats.verifier_adapter = cats_verifier_adapter;
  if (c.self_speculative() && !draft_path.empty())
    return Status::Errorf("--spec %s drafts with the target's own layers; it takes no --draft", spec.c_str());
  if (draft_path.empty() && spec != "none" && !c.self_speculative() && !SpecConfig::is_retrieval(c.method) &&
      c.method != M::kAuto)
    return Status::Errorf("--spec %s needs a draft model (--draft DRAFT.gguf)", spec.c_str());
  c.draft_model_path = draft_path;
  c.draft_len = draft_len;
  std::stringstream ss(tree_widths);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    char* end = nullptr;
    const long w = std::strtol(item.c_str(), &end, 10);
    if (*end != 0) return Status::Errorf("--tree-widths: '%s' is not a number", item.c_str());
    c.tree_widths.push_back(static_cast<int>(w));
  }
  if (!c.tree_widths.empty() && c.method != M::kTree) return Status::Error("--tree-widths applies to --spec tree only");
  c.node_budget = node_budget;
  c.max_tree_nodes = max_tree_nodes;
  c.prune.enabled = c.method == M::kLever && !lever_no_prune;
  c.prune.exit_layer = lever_exit_layer;
  c.prune.theta = lever_theta;
  c.prune.predictor_path = lever_predictor;
  c.profile_path = latency_profile;
  if (c.method == M::kAuto)
    c.auto_profile_dir = auto_profile_dir.empty()     ? default_auto_profile_directory()
                         : auto_profile_dir == "none" ? std::string()
                                                      : auto_profile_dir;
  c.edgellm.alpha = edgellm_alpha;
  c.edgellm.provisional = !edgellm_no_provisional;
  c.edgellm.shape = edgellm_shape_of(edgellm_shape);
  c.mirror.exit_layer = mirror_exit_layer;
  c.mirror.kappa = mirror_kappa;
  c.draft_threads = draft_threads;
  if (c.method == M::kChain) {
    c.draft_min = draft_min;
    c.draft_p_min = draft_p_min >= 0 ? draft_p_min : 0.0f;
  }
  SF_RETURN_IF_ERROR(validate_spec_config(c));
  return c;
}

}  // namespace sf::cli
