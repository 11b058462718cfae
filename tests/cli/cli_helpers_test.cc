// The CLI's building blocks without a subprocess: stop strings, prompt escapes and files,
// llama.cpp argument normalisation, output-path checks and chat context fitting.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/chat_context.h"
#include "cli/checked_output.h"
#include "cli/llama_compat.h"
#include "cli/prompt_text.h"
#include "cli/stop_strings.h"
#include "gguf/per_test_scratch.h"

namespace sf::cli {
namespace {

std::string scratch() { return sf::test::per_test_scratch_dir(); }

TEST(StopStrings, HoldsBackAPossibleStartAndCutsTheStop) {
  StopStrings s({"\nUser:"});
  EXPECT_EQ(s.push("Hello"), "Hello");
  EXPECT_EQ(s.push(" there\nUs"), " there");  // "\nUs" could start the stop string
  EXPECT_FALSE(s.stopped());
  EXPECT_EQ(s.push("er: next"), "");
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.text(), "Hello there");
  EXPECT_EQ(s.push("more"), "");
  EXPECT_EQ(s.flush(), "");
}

TEST(StopStrings, ReleasesAFalseStartAndFlushesTheTail) {
  StopStrings s({"STOP", "END"});
  EXPECT_EQ(s.push("ST"), "");
  EXPECT_EQ(s.push("ar"), "STar");  // no longer a prefix of STOP
  EXPECT_EQ(s.push("E"), "");
  EXPECT_EQ(s.flush(), "E");
  EXPECT_FALSE(s.stopped());
  StopStrings none({});
  EXPECT_EQ(none.push("abc"), "abc");
}

TEST(StopStrings, EarliestOfSeveralStopsWins) {
  StopStrings s({"b", "xyz"});
  s.push("axyzb");
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.text(), "a");
}

TEST(PromptText, EscapesLikeLlamaCpp) {
  EXPECT_EQ(process_escapes("a\\nb\\tc"), "a\nb\tc");
  EXPECT_EQ(process_escapes("q\\\"x\\'y\\\\z"), "q\"x'y\\z");
  EXPECT_EQ(process_escapes("\\x41\\x4a!"), "AJ!");
  EXPECT_EQ(process_escapes("keep \\q and \\x4 and end\\"), "keep \\q and \\x4 and end\\");
}

TEST(PromptText, FileDropsOneTrailingNewline) {
  const std::string path = scratch() + "/p.txt";
  std::ofstream(path) << "line one\nline two\n\n";
  auto text = read_prompt_file(path);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "line one\nline two\n");
  EXPECT_FALSE(read_prompt_file(scratch() + "/missing.txt").ok());
}

// Runs normalize_llama_args on an app with run's shape of options.
Result<std::vector<std::string>> normalize(std::vector<std::string> args) {
  CLI::App app{"t", "specflash run"};
  std::string s;
  int n = 0;
  app.add_option("-n,--n-predict", n);
  app.add_option("-p,--prompt", s);
  app.add_option("--model-draft", s);
  app.add_flag("-v");
  GpuOnlyFlags gpu;
  gpu.add_to(app);
  std::vector<char*> argv = {const_cast<char*>("run")};
  for (auto& a : args) argv.push_back(a.data());
  return normalize_llama_args(app, static_cast<int>(argv.size()), argv.data());
}

TEST(LlamaCompat, TranslatesMultiLetterShortOptions) {
  auto r = normalize({"-ngl", "99", "-md", "d.gguf", "-fa", "-n", "-1", "-v"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<std::string>{"--n-gpu-layers", "99", "--model-draft", "d.gguf", "--flash-attn", "-n", "-1",
                                          "-v"}));
  r = normalize({"-ngl=99", "-n64"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<std::string>{"--n-gpu-layers=99", "-n64"}));
}

TEST(LlamaCompat, ValuesAreNeverRewritten) {
  auto r = normalize({"-p", "-ngl is a flag", "--prompt", "-xyz"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[1], "-ngl is a flag");
  EXPECT_EQ((*r)[3], "-xyz");
}

TEST(LlamaCompat, UnknownSingleDashWordsAreNamed) {
  auto r = normalize({"-n", "5", "-xyz"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown option '-xyz'"), std::string::npos) << r.status().message();
  // -cnv is a llama.cpp spelling, but this app has no --conversation: still refused by name.
  r = normalize({"-cnv"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'-cnv'"), std::string::npos) << r.status().message();
  // "-nfoo": not "-n foo".
  r = normalize({"-nfoo"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'-nfoo'"), std::string::npos) << r.status().message();
}

TEST(OutputPath, RefusesDevicesLinksDirectoriesAndMissingFolders) {
  const std::string dir = scratch();
  EXPECT_TRUE(check_model_output_path(dir + "/new.gguf").ok());
  std::ofstream(dir + "/existing.gguf") << "x";
  EXPECT_TRUE(check_model_output_path(dir + "/existing.gguf").ok());

  auto expect_error = [](const Status& s, const std::string& part) {
    ASSERT_FALSE(s.ok()) << part;
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  };
  expect_error(check_model_output_path("/dev/null"), "device or special file");
  expect_error(check_model_output_path(dir), "is a directory");
  expect_error(check_model_output_path(dir + "/no/such/dir/out.gguf"), "does not exist");
  ASSERT_EQ(symlink((dir + "/existing.gguf").c_str(), (dir + "/link.gguf").c_str()), 0);
  expect_error(check_model_output_path(dir + "/link.gguf"), "symbolic link");
  expect_error(check_model_output_path(dir + "/existing.gguf", {dir + "/existing.gguf"}), "replace the input");
  EXPECT_TRUE(check_model_output_path(dir + "/existing.gguf", {dir + "/existing.gguf"}, true).ok());
  if (geteuid() != 0) {  // root may write anywhere
    const std::string ro = dir + "/readonly";
    std::filesystem::create_directory(ro);
    chmod(ro.c_str(), 0500);
    expect_error(check_model_output_path(ro + "/out.gguf"), "cannot write in the folder");
    chmod(ro.c_str(), 0700);
  }
}

TEST(CheckedOutput, FullDiskIsAnError) {
  const Status s = write_file_checked("/dev/full", std::string(100, 'x'));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/dev/full"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("No space left"), std::string::npos) << s.message();
  EXPECT_TRUE(write_file_checked(scratch() + "/ok.txt", "fine").ok());
}

// One token per character of the rendered conversation: easy sizes to reason about.
Result<std::vector<int32_t>> char_tokens(const std::vector<ChatMessage>& m) {
  size_t n = 0;
  for (const auto& x : m) n += x.content.size();
  return std::vector<int32_t>(n, 7);
}

TEST(ChatContext, DropsOldestTurnsKeepsSystem) {
  std::vector<ChatMessage> m = {{"system", "SS"}, {"user", "aaaa"},      {"assistant", "bbbb"},
                                {"user", "cccc"}, {"assistant", "dddd"}, {"user", "eeee"}};
  // 22 tokens; context 20 with 4 reserved: drop user+assistant pairs until <= 16.
  auto f = fit_conversation(m, char_tokens, 20, 4);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->dropped_messages, 2);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].role, "system");
  EXPECT_EQ(m[1].content, "cccc");
  EXPECT_EQ(f->tokens.size(), 14u);
  // Fits as it is: nothing dropped.
  f = fit_conversation(m, char_tokens, 100, 4);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->dropped_messages, 0);
}

TEST(ChatContext, ALastMessageTooLongIsAnError) {
  std::vector<ChatMessage> m = {{"user", "old"}, {"assistant", "x"}, {"user", std::string(50, 'z')}};
  auto f = fit_conversation(m, char_tokens, 20, 4);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("context of 20"), std::string::npos) << f.status().message();
  // Shorter than the context but without the full reserve: runs short rather than failing.
  std::vector<ChatMessage> m2 = {{"user", std::string(18, 'z')}};
  EXPECT_TRUE(fit_conversation(m2, char_tokens, 20, 4).ok());
}

}  // namespace
}  // namespace sf::cli
