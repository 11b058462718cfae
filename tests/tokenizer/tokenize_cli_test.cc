// `specflash tokenize` end to end (skipped when build/specflash has not been built).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tokenizer_test_util.h"

namespace sf {
namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

RunResult run(const std::string& args) {
  RunResult r;
  const std::string cmd = test::binary_path("specflash") + " tokenize " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class TokenizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test::binary_path("specflash"))) GTEST_SKIP() << "specflash not built";
    if (!test::vocab_present("llama-spm")) GTEST_SKIP();
  }
  const std::string spm_ = " -m " + test::vocab_path("llama-spm") + " ";
};

TEST_F(TokenizeCli, IdsOnOneLine) {
  const RunResult r = run(spm_ + "--ids 'Hello world'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "[1, 15043, 3186]\n");
  EXPECT_EQ(run(spm_ + "--ids --no-bos 'Hello world'").out, "[15043, 3186]\n");
}

TEST_F(TokenizeCli, PiecesPerLine) {
  const RunResult r = run(spm_ + "--no-bos 'Hello world'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, " 15043 -> ' Hello'\n  3186 -> ' world'\n");
}

TEST_F(TokenizeCli, SpecialTokensOnlyWhenAsked) {
  EXPECT_EQ(run(spm_ + "--ids --no-bos '<s>'").out, "[529, 29879, 29958]\n");
  EXPECT_EQ(run(spm_ + "--ids --no-bos --parse-special '<s>'").out, "[1]\n");
}

TEST_F(TokenizeCli, FileIsReadAsRawBytes) {
  const std::string dir = test::scratch_dir("tokenize_cli");
  { std::ofstream(dir + "/text.txt", std::ios::binary) << "\n"; }
  // The vectors' "\n" case: 29871 13 with no BOS.
  EXPECT_EQ(run(spm_ + "--ids --no-bos --file " + dir + "/text.txt").out, "[29871, 13]\n");
  { std::ofstream(dir + "/bad.txt", std::ios::binary) << "ab\xff"; }
  const RunResult bad = run(spm_ + "--file " + dir + "/bad.txt");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.out.rfind("error: ", 0), 0u) << bad.out;
  EXPECT_NE(bad.out.find("UTF-8"), std::string::npos);
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1);
}

TEST_F(TokenizeCli, ErrorsAreOneLine) {
  const RunResult missing = run("-m /nonexistent/model.gguf hi");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out.rfind("error: ", 0), 0u);
  const RunResult usage = run(spm_);
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(usage.out.rfind("error: ", 0), 0u);
}

}  // namespace
}  // namespace sf
