// Every write is checked: a full disk (/dev/full) or a closed pipe on any output is an
// error with a non-zero exit, and the model-writing tools check their output path before
// working and leave no OUT.tmp behind, even when interrupted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

using sf::test::CommandResult;

std::string scratch() { return sf::test::per_test_scratch_dir(); }
CommandResult run(const std::vector<std::string>& args) { return sf::test::run_specflash(args, scratch()); }
CommandResult run_to(const std::vector<std::string>& args, const std::string& stdout_target) {
  return sf::test::run_specflash_io(args, scratch(), "/dev/null", stdout_target);
}
std::string stories() { return sf::test::source_path("models/stories260K.gguf"); }

void expect_error(const CommandResult& r, const std::string& part) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
}

// Runs specflash with stdout on a pipe whose reading end is already closed; exit code.
int run_into_closed_pipe(const std::vector<std::string>& args, std::string* err) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  close(fds[0]);
  const std::string err_path = scratch() + "/pipe-stderr.txt";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(e, 2);
    // The test runner may ignore SIGPIPE; specflash must cope either way, so use the default.
    signal(SIGPIPE, SIG_DFL);
    std::vector<std::string> all = {sf::test::binary_path("specflash")};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  *err = sf::test::read_file(err_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(CheckedWrites, FullDiskOnEveryOutput) {
  expect_error(run({"run", "-m", stories(), "-p", "Once", "-n", "4", "--stats-json", "/dev/full"}), "/dev/full");
  const std::string prompts = scratch() + "/prompts.txt";
  std::ofstream(prompts) << "Once upon a time\n";
  expect_error(run({"dump", "-m", stories(), "--prompts", prompts, "--n-gen", "2", "-o", "/dev/full"}), "/dev/full");
  // With the system's reason, not a guess.
  expect_error(run({"bench", "-m", stories(), "--prompt-file", prompts, "-n", "2", "--methods", "ar", "--budgets",
                    "100%", "--json", "/dev/full"}),
               "/dev/full: write failed: No space left on device");
  expect_error(run_to({"info", "-m", stories()}, "/dev/full"), "stdout");
  expect_error(run_to({"info", "-m", stories(), "--json"}, "/dev/full"), "stdout");
  expect_error(run_to({"tokenize", "-m", stories(), "Once upon a time"}, "/dev/full"), "stdout");
  expect_error(run_to({"run", "-m", stories(), "-p", "Once", "-n", "4"}, "/dev/full"), "stdout");
  expect_error(run_to({"dump", "-m", stories(), "--prompts", prompts, "--n-gen", "2"}, "/dev/full"), "stdout");
  expect_error(run_to({"--version"}, "/dev/full"), "stdout");
}

TEST(CheckedWrites, ClosedPipeIsAnErrorNotASilentDeath) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"info", "-m", stories()},
                                               {"tokenize", "-m", stories(), "hello"},
                                               {"run", "-m", stories(), "-p", "Once", "-n", "8"}}) {
    std::string err;
    EXPECT_EQ(run_into_closed_pipe(args, &err), 1) << args[0] << ": " << err;
    EXPECT_NE(err.find("Broken pipe"), std::string::npos) << args[0] << ": " << err;
  }
}

TEST(ModelOutputPath, CheckedBeforeTheWork) {
  const std::string dir = scratch();
  const std::string target = dir + "/real.gguf";
  std::ofstream(target) << "not a model yet";
  ASSERT_EQ(symlink(target.c_str(), (dir + "/link.gguf").c_str()), 0);
  expect_error(run({"quantize", stories(), dir + "/link.gguf", "Q8_0"}), "symbolic link");
  EXPECT_EQ(sf::test::read_file(target), "not a model yet");  // not clobbered
  expect_error(run({"quantize", stories(), "/dev/null", "Q8_0"}), "device or special file");
  expect_error(run({"pack", stories(), dir}), "is a directory");
  expect_error(run({"pack", stories(), dir + "/missing/out.gguf"}), "does not exist");
  expect_error(run({"synth", "--arch", "llama", "--vocab-from", stories(), "--embd", "64", "--layers", "1", "--heads",
                    "4", "--ffn", "128", "-o", "/dev/full"}),
               "device or special file");
  expect_error(run({"distill", "--target", stories(), "--out", dir + "/nope/d.gguf", "--sample-tokens", "10"}),
               "does not exist");
  expect_error(run({"quantize", stories(), stories(), "Q8_0"}), "replace the input");
  for (const auto& e : std::filesystem::directory_iterator(dir)) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
}

TEST(ModelOutputPath, InterruptedSynthLeavesNoTmpFile) {
  const std::string out = scratch() + "/big.gguf";
  const pid_t pid = fork();
  if (pid == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(sf::test::binary_path("specflash").c_str(), "specflash", "synth", "--arch", "llama", "--vocab-from",
          stories().c_str(), "--embd", "1024", "--layers", "8", "--heads", "8", "--ffn", "4096", "--type", "F32", "-t",
          "1", "-o", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the staging file exists (the work has begun), then interrupt.
  bool started = false;
  for (int i = 0; i < 400 && !started; ++i) {
    started = std::filesystem::exists(out + ".tmp");
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(started) << "synth never created " << out << ".tmp";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace sf
