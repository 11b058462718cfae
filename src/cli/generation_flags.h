// The flags of one generation, shared by run and chat so that a llama.cpp user finds the
// same names in both: the samplers and penalties, -n (with -1 = until end of text or
// context), -r/--reverse-prompt stop strings, --seed (random unless given) and the
// statistics flags. Session flags (model, draft, budget) are in session_flags.h.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "engine/session.h"
#include "sampling/sampler.h"

namespace sf::cli {

struct GenerationFlags {
  int n_predict = 128;
  SamplingParams sampling;
  int64_t seed = -1;  // < 0: a random seed, printed with --stats and --verbose
  std::vector<std::string> reverse_prompts;
  bool escape = true;  // process \n-style escapes in -p and -r (llama.cpp's default)
  bool ignore_eos = false;
  bool stats = false;
  std::string stats_json_path;

  // n_predict_help: what -n limits ("tokens to generate", "most tokens per reply").
  void add_to(CLI::App& app, const std::string& n_predict_help);
  // Resolves the seed (draws one when random) and the escapes; call once after parsing.
  void finish();
  // -n as a count for Session::generate: -1 and -2 mean "until the context is full".
  int tokens_to_generate(int n_ctx, int n_prompt) const;
};

// The --stats text and the --stats-json object of one generation.
void print_generation_stats(const GenerationStats& stats, const Session& session, uint64_t seed);
std::string generation_stats_json(const GenerationStats& stats, const Session& session, uint64_t seed);

}  // namespace sf::cli
