// Runs the built `specflash` binary for end-to-end tests: arguments are shell-quoted, stdin
// is empty, and stdout, stderr and the exit code come back separately.
#pragma once

#include <string>
#include <vector>

namespace sf::test {

struct CommandResult {
  int exit_code = -1;  // 128 + signal number if the process was killed
  std::string out, err;
};

// `specflash args...`; output files are written into scratch_directory, and so is the
// run's cache ($XDG_CACHE_HOME = scratch_directory/xdg-cache, emptied before each run).
CommandResult run_specflash(const std::vector<std::string>& args, const std::string& scratch_directory);

// The same with stdin read from stdin_path and, when stdout_target is not empty, stdout
// sent there instead of captured (e.g. "/dev/full"; or "|head -c1" for a pipe closed early).
CommandResult run_specflash_io(const std::vector<std::string>& args, const std::string& scratch_directory,
                               const std::string& stdin_path, const std::string& stdout_target = "");

std::string shell_quote(const std::string& s);
std::string read_file(const std::string& path);

}  // namespace sf::test
