// Replays the committed fuzz corpus (tests/robustness/corpus/<target>/) through the same
// entry points the libFuzzer targets drive, in the normal build: every crash a fuzzer ever
// found stays fixed. Each file is one input; the test passes when every input returns.
// A corpus folder that is missing or empty fails, so a broken checkout cannot pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz_entry_points.h"
#include "test_paths.h"

namespace sf::fuzz {
namespace {

using EntryPoint = void (*)(const uint8_t*, size_t);

int replay(const std::string& target, EntryPoint entry) {
  const std::filesystem::path dir = test::source_path("tests/robustness/corpus/" + target);
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(e.path().string());
    entry(bytes.data(), bytes.size());
    ++n;
  }
  return n;
}

class CorpusReplay : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { init(test::source_path(""), test::shared_path("")); }
};

TEST_F(CorpusReplay, GgufReader) { EXPECT_GT(replay("gguf_reader", gguf_reader), 0); }
TEST_F(CorpusReplay, Tokenizer) { EXPECT_GT(replay("tokenizer", tokenizer), 0); }
TEST_F(CorpusReplay, ChatFormat) { EXPECT_GT(replay("chat_format", chat_format), 0); }
TEST_F(CorpusReplay, CompletionRequest) { EXPECT_GT(replay("completion_request", completion_request), 0); }
TEST_F(CorpusReplay, DraftCompat) { EXPECT_GT(replay("draft_compat", draft_compat), 0); }

// The tokenizer corpus indexes vocabularies by position: with shared/ present every
// vocabulary type must be there, or the replay silently covers less than it says.
TEST_F(CorpusReplay, LoadsEveryVocabularyType) {
  SF_SKIP_WITHOUT_SHARED();
  const auto& names = loaded_vocabularies();
  EXPECT_GE(names.size(), 12u);
  EXPECT_EQ(names[0], "stories260K.gguf");
  bool spm = false, bpe = false, wpm = false;
  for (const auto& n : names) {
    spm |= n.find("llama-spm") != std::string::npos;
    bpe |= n.find("gpt-2") != std::string::npos;
    wpm |= n.find("bert") != std::string::npos;
  }
  EXPECT_TRUE(spm && bpe && wpm);
}

}  // namespace
}  // namespace sf::fuzz
