#include "specflash_runner.h"

#include <sys/wait.h>

#include <cstdlib>
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
  std::string cmd = shell_quote(binary_path("specflash"));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  const std::string out = scratch_directory + "/stdout.txt", err = scratch_directory + "/stderr.txt";
  cmd += " >" + shell_quote(out) + " 2>" + shell_quote(err) + " </dev/null";
  const int status = std::system(cmd.c_str());
  CommandResult r;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.exit_code = 128 + WTERMSIG(status);
  }
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

}  // namespace sf::test
