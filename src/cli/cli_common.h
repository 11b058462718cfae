// Helpers shared by the subcommands: error reporting and CLI11 parsing conventions.
// Exit codes (the README promises them): 0 success, 1 runtime error, 2 usage error.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "base/status.h"

namespace sf::cli {

// Prints "error: <message>" on one line to stderr and returns exit code 1.
inline int fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 1;
}
inline int fail(const std::string& message) { return fail(Status::Error(message)); }

// The same for a request that cannot be satisfied as given (bad flag values, conflicting
// flags): exit code 2, like a parse error.
inline int usage_error(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 2;
}
inline int usage_error(const std::string& message) { return usage_error(Status::Error(message)); }

// A CLI11 app whose help shows every option's default: options added later capture the
// value of the variable they bind, so help and behaviour cannot drift apart.
inline void show_defaults_in_help(CLI::App& app) { app.option_defaults()->always_capture_default(); }

// Parses argv with CLI11; on --help prints help and returns 0 through *exit_code; on a
// usage error prints one line plus a pointer to --help and returns 2. Before CLI11 sees
// them, llama.cpp's multi-letter short options are translated and any other single-dash
// word is refused by name (llama_compat.h), so "-ngl 99" is never read as "-n gl".
bool parse_args(CLI::App& app, int argc, char** argv, int* exit_code);

}  // namespace sf::cli
