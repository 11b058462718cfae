// The prompt tokens llama.cpp produced for the reference models (../shared/reference):
// each prompt, tokenized with the model's BOS rule and special tokens parsed, must give the
// "tokens" field exactly.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tokenizer_test_util.h"

namespace sf {
namespace {

// shared/README.md: which prompt file goes with which model.
std::string prompts_file_for(const std::string& model) {
  if (model == "stories260K") return "prompts-stories.txt";
  if (model.rfind("synth-qwen2-gpt2", 0) == 0 || model == "synth-llama3-spm") {
    return "prompts-bpe.txt";
  }
  return "prompts-en.txt";
}

std::string model_path_for(const std::string& model) {
  if (model == "stories260K") return test::shared_path("models/stories260K.gguf");
  return test::shared_path("reference/models/" + model + ".gguf");
}

// One prompt per line; a literal "\n" inside a line stands for a newline.
std::vector<std::string> read_prompts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> prompts;
  std::string line;
  while (std::getline(in, line)) {
    std::string p;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == 'n') {
        p += '\n';
        ++i;
      } else {
        p += line[i];
      }
    }
    prompts.push_back(p);
  }
  return prompts;
}

std::vector<std::string> reference_models() {
  std::vector<std::string> names;
  const std::string dir = test::shared_path("reference");
  if (!std::filesystem::exists(dir)) return names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".jsonl") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ReferenceTokensTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceTokensTest, PromptTokensMatchLlamaCpp) {
  const std::string model = GetParam();
  const std::string path = model_path_for(model);
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  auto file = gguf::GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto tok = Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok.ok()) << tok.status().message();

  const auto prompts = read_prompts(test::shared_path("reference/" + prompts_file_for(model)));
  std::ifstream in(test::shared_path("reference/" + model + ".jsonl"));
  std::string line;
  size_t i = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string prompt = j.at("prompt").get<std::string>();
    ASSERT_LT(i, prompts.size());
    EXPECT_EQ(prompts[i], prompt) << "prompt file and dump disagree on line " << i;
    const auto expected = j.at("tokens").get<std::vector<int32_t>>();
    auto ids = tok->encode(prompt, /*add_special=*/true, /*parse_special=*/true);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    EXPECT_EQ(test::ids_to_string(*ids), test::ids_to_string(expected)) << model << ": " << prompt;
    // And the prompt comes back from its tokens.
    auto text = tok->decode(*ids);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, prompt);
    ++i;
  }
  EXPECT_EQ(i, prompts.size());
}

INSTANTIATE_TEST_SUITE_P(AllReferenceModels, ReferenceTokensTest, ::testing::ValuesIn(reference_models()),
                         [](const auto& name_info) {
                           std::string n = name_info.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(ReferenceTokens, DumpsArePresent) { EXPECT_GE(reference_models().size(), 5u); }

}  // namespace
}  // namespace sf
