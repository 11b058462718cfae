#include "specflash_runner.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "test_paths.h"

namespace sf::test {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

CommandResult run_specflash(const std::vector<std::string>& args, const std::string& scratch_directory) {
  return run_specflash_io(args, scratch_directory, "/dev/null");
}

CommandResult run_specflash_io(const std::vector<std::string>& args, const std::string& scratch_directory,
                               const std::string& stdin_path, const std::string& stdout_target) {
  // Each run gets an empty cache: auto keeps what it learnt there (spec/auto_profile.h), and
  // a test's run must not start from what an earlier run of the suite left.
  const std::string cache = scratch_directory + "/xdg-cache";
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
  std::string cmd = "XDG_CACHE_HOME=" + shell_quote(cache) + " " + shell_quote(binary_path("specflash"));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  const std::string out = scratch_directory + "/stdout.txt", err = scratch_directory + "/stderr.txt",
                    code = scratch_directory + "/exit_code.txt";
  cmd += " 2>" + shell_quote(err) + " <" + shell_quote(stdin_path);
  if (stdout_target.empty()) {
    cmd += " >" + shell_quote(out);
  } else if (stdout_target[0] == '|') {
    // A pipeline's status is its last command's: keep specflash's from PIPESTATUS.
    cmd = "bash -c " +
          shell_quote(cmd + " " + stdout_target + " >/dev/null; echo ${PIPESTATUS[0]} >" + shell_quote(code));
  } else {
    cmd += " >" + shell_quote(stdout_target);
  }
  std::remove(code.c_str());
  const int status = std::system(cmd.c_str());
  CommandResult r;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.exit_code = 128 + WTERMSIG(status);
  }
  if (!stdout_target.empty() && stdout_target[0] == '|') r.exit_code = std::atoi(read_file(code).c_str());
  if (stdout_target.empty()) r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

}  // namespace sf::test
