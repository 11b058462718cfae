// The flags that configure a Session, shared by run, dump and bench so their names,
// defaults and help text never drift apart.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"
#include "cli/llama_compat.h"
#include "engine/session.h"

namespace sf::cli {

struct SessionFlags {
  std::string model_path;
  int n_threads = 0;
  int n_ctx = 0;
  std::string mem_budget;
  std::string io_bandwidth;
  int stream_buffers = 2;
  std::string io_backend = "auto";
  std::string draft_path;
  std::string spec;  // empty: not given (default_method_for decides)
  // Set by run and chat before to_options(): sampling with a --seed the user gave. auto's
  // choices follow measured timings, so its trees (and, with sampling, the tokens a seed
  // gives) differ between runs; the default then keeps a run repeatable (chain or none).
  bool repeatable_sampling = false;
  int draft_len = 4;
  std::string tree_widths;
  // Frontier trees and LEVER.
  int node_budget = 16;
  int max_tree_nodes = 64;
  int lever_exit_layer = -1;
  float lever_theta = 0.1f;
  std::string lever_predictor;
  bool lever_no_prune = false;
  float edgellm_alpha = 0.01f;
  bool edgellm_no_provisional = false;
  std::string edgellm_shape = "likely";
  int mirror_exit_layer = -1;
  int mirror_kappa = 8;
  int draft_threads = 0;
  std::string latency_profile;
  // auto: where what it learnt is kept (empty: not given, the default directory; "none": nowhere).
  std::string auto_profile_dir;
  // CATS / Kangaroo self-speculation (no draft model).
  int cats_ldm = -1;
  int cats_lsv = -1;
  int cats_branches = 0;
  std::string cats_draft_adapter, cats_verifier_adapter;

  // The speculative settings these flags give (method from --spec; validated).
  Result<SpecConfig> spec_config() const;
  // The --spec method in effect: the one given, else default_method_for(*this).
  std::string method() const;

  // llama.cpp spellings (issue 16): -md/--model-draft, --draft-max, --draft-min, and the
  // GPU-only options, accepted with a note.
  int draft_min = 0;
  float draft_p_min = -1;  // negative: not given (no confidence stop)
  // coordgen (retrieval drafting)
  bool coordgen_no_calib = false;
  bool coordgen_no_reuse = false;
  std::string history_dir;
  std::string history_task = "default";
  int64_t history_max_tokens = 1 << 20;
  bool history_clear = false;
  GpuOnlyFlags gpu_only;

  // model_required: -m must be given (else defaults to the embedded model).
  void add_to(CLI::App& app, bool model_required);
  // Errors are usage errors (exit 2): the flags ask for something impossible.
  Result<SessionOptions> to_options() const;
  // One "note:" line per accepted-but-ignored llama.cpp option; call after parsing.
  void print_notes() const;
};

// The method used when --spec is not given ("none" or a --spec name). The one place that
// decides the default (auto; chain or none where llama.cpp's --draft-min/--draft-p-min or
// sampling with a fixed --seed ask for a run that repeats, since auto's choices follow timings).
std::string default_method_for(const SessionFlags& flags);

// --edgellm-shape's value ("paced" or "likely"; CLI11 has checked it) as the config's enum.
EdgeLlmConfig::Shape edgellm_shape_of(const std::string& name);

// Session::create with what a user waits for on stderr: a line before loading a model big
// enough to take a while, prefill progress for long prompts, and a warning when an
// --io-bandwidth is so low that one forward pass takes longer than a few seconds, and the
// pack note (engine/pack_hint.h). A caller that sets options.prefill_progress keeps its own.
Result<std::unique_ptr<Session>> create_session_with_progress(SessionOptions options);

}  // namespace sf::cli
