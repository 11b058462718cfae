// Helpers shared by the subcommands: error reporting and CLI11 parsing conventions.
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

// Parses argv with CLI11; on --help prints help and returns 0 through *exit_code; on a
// usage error prints one line plus a pointer to --help and returns 2.
inline bool parse_args(CLI::App& app, int argc, char** argv, int* exit_code) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    *exit_code = 0;
  } catch (const CLI::CallForAllHelp&) {
    std::printf("%s", app.help("", CLI::AppFormatMode::All).c_str());
    *exit_code = 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s (see '%s --help')\n", e.what(), app.get_name().c_str());
    *exit_code = 2;
  }
  return false;
}

}  // namespace sf::cli
