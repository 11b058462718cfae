// Every *.gguf.inp/.out pair in ../shared/vocab whose vocabulary file is present must be
// reproduced exactly: the vectors are llama.cpp's test-tokenizer-0 outputs, which tokenize
// with add_special = false and parse_special = false.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tokenizer_test_util.h"

namespace sf {
namespace {

std::vector<std::string> vector_names() {
  std::vector<std::string> names;
  const std::string dir = test::shared_path("vocab");
  if (!std::filesystem::exists(dir)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-";
    const std::string suffix = ".gguf.inp";
    if (file.rfind(prefix, 0) == 0 && file.size() > prefix.size() + suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(file.substr(prefix.size(), file.size() - prefix.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

class VocabVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabVectorsTest, MatchesLlamaCppIds) {
  const std::string name = GetParam();
  if (!test::vocab_present(name)) {
    GTEST_SKIP() << "ggml-vocab-" << name << ".gguf is absent; its pre-tokenizer is covered by "
                 << "pretokenizer_test";
  }
  auto tok = test::load_vocab(name);
  ASSERT_TRUE(tok.has_value());
  const auto vectors = test::read_vocab_vectors(test::vocab_path(name));
  ASSERT_FALSE(vectors.empty());
  int failures = 0;
  for (const auto& v : vectors) {
    auto ids = tok->encode(v.input, /*add_special=*/false, /*parse_special=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    if (*ids != v.ids) ++failures;
    EXPECT_EQ(test::ids_to_string(*ids), test::ids_to_string(v.ids)) << name << ": input '" << v.input << "'";
  }
  RecordProperty("vectors", static_cast<int>(vectors.size()));
  RecordProperty("failures", failures);
}

INSTANTIATE_TEST_SUITE_P(AllVocabs, VocabVectorsTest, ::testing::ValuesIn(vector_names()), [](const auto& name_info) {
  std::string n = name_info.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

TEST(VocabVectors, SharedFolderHasVectors) {
  SF_SKIP_WITHOUT_SHARED();
  // Guards against silently testing nothing if ../shared moves.
  EXPECT_GE(vector_names().size(), 10u);
}

}  // namespace
}  // namespace sf
