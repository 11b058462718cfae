// llama.cpp habits that cost nothing to honour. llama.cpp spells some options as
// multi-letter words after one dash (-ngl, -md, -fa); CLI11 would read "-ngl 99" as "-n"
// with the value "gl" and print a baffling error. normalize_llama_args rewrites the known
// words to their long names before CLI11 parses, and refuses every other single-dash word
// by name. GPU-only options are accepted with a one-line note that they do nothing here.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace sf::cli {

// argv[1..] with llama.cpp's multi-letter short options replaced by their long names.
// Values of options that take one are never rewritten (a prompt may start with '-').
// Error: a single-dash word that is neither a known llama.cpp spelling nor a number,
// named in the message ("unknown option '-xyz'").
Result<std::vector<std::string>> normalize_llama_args(const CLI::App& app, int argc, char** argv);

// Registers the GPU-only llama.cpp options (-ngl, -fa, -sm, -mg, -ts, -dev, -nkvo, ...) on
// `app`; note_ignored_gpu_flags then prints one "note:" line to stderr per option given.
struct GpuOnlyFlags {
  std::vector<CLI::Option*> options;
  void add_to(CLI::App& app);
  void note_ignored() const;
};

}  // namespace sf::cli
