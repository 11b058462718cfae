// decode(encode(text)) == text for the test-vector inputs and for random UTF-8, for every
// SPM and BPE vocabulary present (WordPiece normalises text, so it cannot round-trip).
#include <gtest/gtest.h>

#include <random>

#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace sf {
namespace {

const std::vector<std::string> kLosslessVocabs = {"llama-spm", "phi-3",        "baichuan",      "gpt-2",
                                                  "gpt-neox",  "mpt",          "falcon",        "starcoder",
                                                  "refact",    "deepseek-llm", "deepseek-coder"};

// Random text from a mix of scripts, whitespace, digits, punctuation, emoji and combining
// marks. U+2581 is left out for SPM vocabularies, which use it to stand for a space.
std::string random_utf8(std::mt19937& rng, size_t n_codepoints, bool allow_2581) {
  static const std::pair<uint32_t, uint32_t> kRanges[] = {
      {0x20, 0x7E},       {0x09, 0x0A},       {0xA0, 0xFF},       {0x100, 0x17F},   {0x370, 0x3FF},   {0x400, 0x4FF},
      {0x591, 0x5F4},     {0x600, 0x6FF},     {0x900, 0x97F},     {0xE00, 0xE7F},   {0x1E00, 0x1EFF}, {0x2000, 0x206F},
      {0x2500, 0x25FF},   {0x3000, 0x303F},   {0x3040, 0x30FF},   {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3}, {0xFF00, 0xFFEF},
      {0x1F300, 0x1F6FF}, {0x1F900, 0x1F9FF}, {0x10000, 0x1007F}, {0x0300, 0x036F}, {0x30, 0x39},     {0x20, 0x20},
  };
  std::uniform_int_distribution<size_t> pick(0, std::size(kRanges) - 1);
  std::string s;
  while (n_codepoints > 0) {
    const auto [lo, hi] = kRanges[pick(rng)];
    const uint32_t cp = std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
    if (cp == 0x2581 && !allow_2581) continue;
    tok::append_utf8(cp, s);
    --n_codepoints;
  }
  return s;
}

class RoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTripTest, TestVectorInputs) {
  const std::string name = GetParam();
  if (!test::vocab_present(name)) GTEST_SKIP() << name << " vocabulary absent";
  auto tok = test::load_vocab(name);
  ASSERT_TRUE(tok.has_value());
  // Inputs of any present vector file (they are the same for every vocabulary).
  const auto vectors = test::read_vocab_vectors(test::vocab_path("llama-spm"));
  for (const auto& v : vectors) {
    for (bool add_special : {false, true}) {
      auto ids = tok->encode(v.input, add_special, /*parse_special=*/false);
      ASSERT_TRUE(ids.ok()) << ids.status().message();
      auto text = tok->decode(*ids);
      ASSERT_TRUE(text.ok()) << text.status().message();
      EXPECT_EQ(*text, v.input) << name << " add_special=" << add_special;
    }
  }
}

TEST_P(RoundTripTest, RandomUtf8) {
  const std::string name = GetParam();
  if (!test::vocab_present(name)) GTEST_SKIP() << name << " vocabulary absent";
  auto tok = test::load_vocab(name);
  ASSERT_TRUE(tok.has_value());
  std::mt19937 rng(1234);
  const bool spm = tok->type() == VocabType::kSpm;
  for (int iter = 0; iter < 300; ++iter) {
    const std::string text = random_utf8(rng, 1 + iter % 40, /*allow_2581=*/!spm);
    auto ids = tok->encode(text, /*add_special=*/iter % 2 == 0, /*parse_special=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    auto back = tok->decode(*ids);
    ASSERT_TRUE(back.ok()) << back.status().message();
    ASSERT_EQ(*back, text) << name << " iteration " << iter;
  }
}

INSTANTIATE_TEST_SUITE_P(Lossless, RoundTripTest, ::testing::ValuesIn(kLosslessVocabs), [](const auto& name_info) {
  std::string n = name_info.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

TEST(RoundTrip, ParsedSpecialTokensRenderOnRequest) {
  if (!test::vocab_present("phi-3")) GTEST_SKIP();
  auto tok = test::load_vocab("phi-3");
  ASSERT_TRUE(tok.has_value());
  const std::string text = "<|user|>\nHi there<|end|>\n<|assistant|>\n";
  auto ids = tok->encode(text, /*add_special=*/false, /*parse_special=*/true);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ((*ids)[0], tok->find_token("<|user|>"));
  DecodeOptions show;
  show.render_special = true;
  auto shown = tok->decode(*ids, show);
  ASSERT_TRUE(shown.ok());
  // Phi-3's special tokens strip the whitespace after them (llama.cpp's rstrip rule), so
  // the newlines after them are gone; the text between them survives.
  EXPECT_EQ(*shown, "<|user|>Hi there<|end|><|assistant|>");
  auto hidden = tok->decode(*ids);
  ASSERT_TRUE(hidden.ok());
  EXPECT_EQ(*hidden, "Hi there");
}

TEST(RoundTrip, SpecialTextStaysTextWithoutParseSpecial) {
  if (!test::vocab_present("gpt-2")) GTEST_SKIP();
  auto tok = test::load_vocab("gpt-2");
  ASSERT_TRUE(tok.has_value());
  const int32_t eot = tok->find_token("<|endoftext|>");
  ASSERT_GE(eot, 0);
  auto plain = tok->encode("a<|endoftext|>b", false, false);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(std::count(plain->begin(), plain->end(), eot), 0);
  EXPECT_EQ(*tok->decode(*plain), "a<|endoftext|>b");
  auto parsed = tok->encode("a<|endoftext|>b", false, true);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[1], eot);
  EXPECT_TRUE(tok->is_eog(eot));
}

}  // namespace
}  // namespace sf
