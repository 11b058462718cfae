// Long phases are not silent: model load of a big file, pack, the prefill of a long prompt over
// slow (emulated) storage, and a warning when --io-bandwidth makes a pass take minutes.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

using sf::test::CommandResult;

std::string scratch() { return sf::test::per_test_scratch_dir(); }
CommandResult run(const std::vector<std::string>& args) { return sf::test::run_specflash(args, scratch()); }
std::string stories() { return sf::test::source_path("models/stories260K.gguf"); }

TEST(Progress, BigModelLoadIsAnnounced) {
  // 9 layers of 512 x 2048 F16: just over the 64 MiB where loading is announced.
  const std::string model = scratch() + "/big.gguf";
  CommandResult r = run({"synth", "--arch", "llama", "--vocab-from", stories(), "--embd", "512", "--layers", "9",
                         "--heads", "8", "--ffn", "2048", "--type", "F16", "-o", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("synth: wrote"), std::string::npos) << r.err;
  r = run({"run", "-m", model, "-p", "Once", "-n", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("loading " + model + " ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("loaded in "), std::string::npos) << r.err;
  // pack reports its progress too (in tensors, by tenths) and its summary.
  r = run({"pack", model, scratch() + "/packed.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("pack:  50%"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pack: wrote"), std::string::npos) << r.err;
  // The small default model loads without a word.
  r = run({"run", "-m", stories(), "-p", "Once", "-n", "1"});
  EXPECT_EQ(r.err.find("loading"), std::string::npos) << r.err;
}

TEST(Progress, SlowPrefillShowsProgressShortOneDoesNot) {
  std::string prompt;
  for (int i = 0; i < 60; ++i) prompt += "Once upon a time there was a dog. ";
  // Every layer streamed at an emulated 1 MB/s: each 256-token chunk takes about a second.
  CommandResult r = run(
      {"run", "-m", stories(), "-c", "1024", "-p", prompt, "-n", "1", "--mem-budget", "0%", "--io-bandwidth", "1M"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("prefill: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" prompt tokens, "), std::string::npos) << r.err;
  // A prompt that fits one forward pass is never reported, however slow the storage.
  r = run({"run", "-m", stories(), "-p", "Once upon a time", "-n", "1", "--mem-budget", "0%", "--io-bandwidth", "1M"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("prefill"), std::string::npos) << r.err;
}

TEST(Progress, VerySlowEmulatedStorageIsWarnedAboutBeforeGenerating) {
  // At 50 KB/s a pass over stories260K's streamed layers takes about 20 s: the warning comes
  // right after loading, so the run is cut short once it had time to appear.
  const std::string err = scratch() + "/err.txt";
  const std::string cmd = "timeout 3 " + sf::test::shell_quote(sf::test::binary_path("specflash")) + " run -m " +
                          sf::test::shell_quote(stories()) + " -p Once -n 1 --mem-budget 0% --io-bandwidth 50K 2>" +
                          sf::test::shell_quote(err) + " >/dev/null";
  std::system(cmd.c_str());
  const std::string text = sf::test::read_file(err);
  EXPECT_NE(text.find("warning: --io-bandwidth"), std::string::npos) << text;
  EXPECT_NE(text.find("(EMULATED)"), std::string::npos) << text;
  EXPECT_NE(text.find(" s per pass"), std::string::npos) << text;
}

}  // namespace
}  // namespace sf
