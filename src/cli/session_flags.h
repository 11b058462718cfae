// The flags that configure a Session, shared by run, dump and bench so their names,
// defaults and help text never drift apart.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"
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
  std::string spec = "none";
  int draft_len = 4;
  std::string tree_widths;
  // Frontier trees and LEVER.
  int node_budget = 16;
  int max_tree_nodes = 64;
  int lever_exit_layer = -1;
  float lever_theta = 0.1f;
  std::string lever_predictor;
  bool lever_no_prune = false;
  std::string latency_profile;

  // The speculative settings these flags give (method from --spec; validated).
  Result<SpecConfig> spec_config() const;

  // model_required: -m must be given (else defaults to the embedded model).
  void add_to(CLI::App& app, bool model_required);
  Result<SessionOptions> to_options() const;
};

}  // namespace sf::cli
