// Pre-tokenizers checked against splits written out by hand from the regex definitions
// (not produced by running the regexes), for the families whose vocabulary file is absent
// from ../shared/vocab (llama-bpe, qwen2 / deepseek-r1-qwen, command-r, chameleon,
// roberta-bpe) and for the tricky cases: contractions, digit groups, CJK, emoji,
// combining marks, whitespace runs and non-ASCII whitespace.
#include "tokenizer/pretokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tokenizer_test_util.h"

namespace sf::tok {
namespace {

using Pieces = std::vector<std::string>;

Pieces split(const std::string& pre, const std::string& text) {
  auto p = PreTokenizer::for_name(pre);
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return {};
  std::vector<std::string_view> views;
  p->split(text, views);
  Pieces out(views.begin(), views.end());
  // Whatever the regexes, the pieces must tile the text exactly.
  std::string joined;
  for (const auto& s : out) {
    EXPECT_FALSE(s.empty());
    joined += s;
  }
  EXPECT_EQ(joined, text);
  return out;
}

TEST(PreTokenizerLlama3, ContractionsAreCaseInsensitive) {
  EXPECT_EQ(split("llama-bpe", "I've been 'told he's"), (Pieces{"I", "'ve", " been", " '", "told", " he", "'s"}));
  EXPECT_EQ(split("llama-bpe", "'RE you"), (Pieces{"'RE", " you"}));
  EXPECT_EQ(split("llama-bpe", "Hello, y'all! How are you \xF0\x9F\x98\x81 ?"),
            (Pieces{"Hello", ",", " y", "'all", "!", " How", " are", " you", " \xF0\x9F\x98\x81", " ?"}));
}

TEST(PreTokenizerLlama3, DigitsInGroupsOfAtMostThree) {
  EXPECT_EQ(split("llama-bpe", "1234567"), (Pieces{"123", "456", "7"}));
  EXPECT_EQ(split("llama-bpe", "333333333"), (Pieces{"333", "333", "333"}));
  // Arabic-Indic digits are \p{N} too.
  EXPECT_EQ(split("llama-bpe", "\xD9\xA3\xD9\xA4\xD9\xA5\xD9\xA6"), (Pieces{"\xD9\xA3\xD9\xA4\xD9\xA5", "\xD9\xA6"}));
  // "½" is a number (No); the spaces around numbers stand alone.
  EXPECT_EQ(split("llama-bpe", "ied 4 \xC2\xBD months"), (Pieces{"ied", " ", "4", " ", "\xC2\xBD", " months"}));
  EXPECT_EQ(split("llama-bpe", "1314151\xE5\xA4\xA9\xEF\xBD\x9E"),
            (Pieces{"131", "415", "1", "\xE5\xA4\xA9", "\xEF\xBD\x9E"}));
}

TEST(PreTokenizerLlama3, WhitespaceRunsAndNewlines) {
  EXPECT_EQ(split("llama-bpe", "   Hello"), (Pieces{"  ", " Hello"}));
  EXPECT_EQ(split("llama-bpe", "Hello   "), (Pieces{"Hello", "   "}));
  EXPECT_EQ(split("llama-bpe", "\n\n\n"), (Pieces{"\n\n\n"}));
  EXPECT_EQ(split("llama-bpe", "\t\n"), (Pieces{"\t\n"}));
  EXPECT_EQ(split("llama-bpe", "\n ="), (Pieces{"\n", " ="}));
  EXPECT_EQ(split("llama-bpe", "end.\n\nNext"), (Pieces{"end", ".\n\n", "Next"}));
  EXPECT_EQ(split("llama-bpe", "    Hello\n    Hello"), (Pieces{"   ", " Hello", "\n", "   ", " Hello"}));
  // U+00A0 is whitespace but not \r or \n: it may lead a word.
  EXPECT_EQ(split("llama-bpe",
                  "a\xC2\xA0"
                  "b"),
            (Pieces{"a",
                    "\xC2\xA0"
                    "b"}));
}

TEST(PreTokenizerLlama3, UnicodeCategoriesAreReal) {
  // CJK ideographs are letters (Lo) and join ASCII letters around them.
  EXPECT_EQ(split("llama-bpe",
                  "\xE6\x88\x91\xE6\x83\xB3\xE5\x9C\xA8"
                  "apple\xE5\xB7\xA5\xE4\xBD\x9C"),
            (Pieces{"\xE6\x88\x91\xE6\x83\xB3\xE5\x9C\xA8"
                    "apple\xE5\xB7\xA5\xE4\xBD\x9C"}));
  // Devanagari: the virama (Mn) and the vowel sign (Mn) are not letters.
  // न म स ् त े -> "नमस", "्त", "े"
  EXPECT_EQ(split("llama-bpe", "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87"),
            (Pieces{"\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8", "\xE0\xA5\x8D\xE0\xA4\xA4", "\xE0\xA5\x87"}));
  // Emoji are neither letters nor numbers.
  EXPECT_EQ(split("llama-bpe", "\xF0\x9F\x9A\x80 (normal)"), (Pieces{"\xF0\x9F\x9A\x80", " (", "normal", ")"}));
  // Greek capital omega is a letter.
  EXPECT_EQ(split("llama-bpe", "\xCE\xA9mega!"), (Pieces{"\xCE\xA9mega", "!"}));
}

TEST(PreTokenizerQwen2, SingleDigitsOtherwiseLikeLlama3) {
  EXPECT_EQ(split("qwen2", "33333"), (Pieces{"3", "3", "3", "3", "3"}));
  EXPECT_EQ(split("qwen2", "w048 7tuijk"), (Pieces{"w", "0", "4", "8", " ", "7", "tuijk"}));
  EXPECT_EQ(split("qwen2", "I'M not"), (Pieces{"I", "'M", " not"}));
  EXPECT_EQ(split("deepseek-r1-qwen", "   Hello"), (Pieces{"  ", " Hello"}));
  EXPECT_EQ(split("deepseek-r1-qwen", "3.14"), (Pieces{"3", ".", "1", "4"}));
}

TEST(PreTokenizerGpt2, CaseSensitiveContractionsAndSpacePrefix) {
  EXPECT_EQ(split("gpt-2", "'RE you"), (Pieces{"'", "RE", " you"}));
  EXPECT_EQ(split("gpt-2", "I'll do it"), (Pieces{"I", "'ll", " do", " it"}));
  EXPECT_EQ(split("gpt-2", "ied 4 \xC2\xBD months"), (Pieces{"ied", " 4", " \xC2\xBD", " months"}));
  EXPECT_EQ(split("gpt-2", "1234567 + 89"), (Pieces{"1234567", " +", " 89"}));
  EXPECT_EQ(split("gpt-2", "   Hello"), (Pieces{"  ", " Hello"}));
  // Only an ASCII space can lead a word; other whitespace stands alone.
  EXPECT_EQ(split("gpt-2", "x\xE3\x80\x80\xE3\x80\x80y"), (Pieces{"x", "\xE3\x80\x80", "\xE3\x80\x80", "y"}));
  EXPECT_EQ(split("roberta-bpe", "Hello world!!"), (Pieces{"Hello", " world", "!!"}));
}

TEST(PreTokenizerCommandR, DigitsAreSplitBeforeWords) {
  // Digits are cut out first, so the gpt-2 regex never sees " 7" together.
  EXPECT_EQ(split("command-r", "w048 7tuijk"), (Pieces{"w", "0", "4", "8", " ", "7", "tuijk"}));
  EXPECT_EQ(split("command-r", "3333"), (Pieces{"3", "3", "3", "3"}));
  EXPECT_EQ(split("command-r", " Hello, world"), (Pieces{" Hello", ",", " world"}));
}

TEST(PreTokenizerChameleon, SequentialSplits) {
  EXPECT_EQ(split("chameleon", "Hello, world!"), (Pieces{"Hello", ",", " world", "!"}));
  EXPECT_EQ(split("chameleon", "   Hello"), (Pieces{"  ", " Hello"}));
  EXPECT_EQ(split("chameleon", "    Hello"), (Pieces{"    ", "Hello"}));
  EXPECT_EQ(split("chameleon", "\n\n"), (Pieces{"\n", "\n"}));
  // Later regexes split the segments earlier ones produced.
  EXPECT_EQ(split("chameleon", "<sentinel:12>x"), (Pieces{"<", "sentinel", ":", "1", "2", ">", "x"}));
}

TEST(PreTokenizerFalcon, PunctuationRunsThenGpt2ThenDigitTriples) {
  EXPECT_EQ(split("falcon", " 3333"), (Pieces{" ", "333", "3"}));
  EXPECT_EQ(split("falcon", "Hello, world!"), (Pieces{"Hello", ",", " world", "!"}));
}

TEST(PreTokenizerDeepseekLlm, ExplicitRanges) {
  // "\s+$" only at the very end of a segment; CJK runs are their own words.
  EXPECT_EQ(split("deepseek-llm", "Hi  "), (Pieces{"Hi", "  "}));
  EXPECT_EQ(split("deepseek-llm", "\xE4\xBD\xA0\xE5\xA5\xBD ok"), (Pieces{"\xE4\xBD\xA0\xE5\xA5\xBD", " ok"}));
  // Ideographic space is whitespace, never part of a CJK word.
  EXPECT_EQ(split("deepseek-llm", "\xE4\xB8\xAD\xE3\x80\x80\xE6\x96\x87"),
            (Pieces{"\xE4\xB8\xAD", "\xE3\x80\x80", "\xE6\x96\x87"}));
}

TEST(PreTokenizer, LookaheadStopsAtSegmentEnd) {
  // "\s+(?!\S)" at the end of a segment sees no following character: the whole run
  // matches. With llama.cpp's sequential semantics the segment boundary is the text end.
  EXPECT_EQ(split("gpt-2", "a  "), (Pieces{"a", "  "}));
}

TEST(PreTokenizer, LongRunsDoNotFail) {
  const std::string spaces(200000, ' ');
  const std::string text = "a" + spaces + "b";
  const Pieces p = split("llama-bpe", text);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].size(), spaces.size() - 1);
  EXPECT_EQ(p[2], " b");
}

TEST(PreTokenizer, UnknownNameIsAClearError) {
  auto p = PreTokenizer::for_name("no-such-tokenizer");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("unknown pre-tokenizer 'no-such-tokenizer'"), std::string::npos);
  EXPECT_NE(p.status().message().find("llama-bpe"), std::string::npos);
}

TEST(PreTokenizer, BadPatternIsAnError) {
  auto p = PreTokenizer::from_patterns("broken", {"(unclosed"});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("bad regex"), std::string::npos);
}

TEST(PreTokenizer, EveryKnownNameCompiles) {
  for (const std::string& name : PreTokenizer::known_names()) {
    auto p = PreTokenizer::for_name(name);
    EXPECT_TRUE(p.ok()) << name << ": " << p.status().message();
  }
}

// A weak but independent link to llama.cpp's real output for the vocabularies that are
// absent here: BPE never merges across pre-tokenizer pieces, so each input's token count
// in the .out vectors is at least the number of pieces our split produces.
class AbsentVocabVectorsTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(AbsentVocabVectorsTest, NeverMoreSplitThanTokens) {
  SF_SKIP_WITHOUT_SHARED();
  const auto& [vocab, pre] = GetParam();
  const std::string base = test::shared_path("vocab/ggml-vocab-" + vocab + ".gguf");
  if (!std::filesystem::exists(base + ".inp")) GTEST_SKIP();
  auto p = PreTokenizer::for_name(pre);
  ASSERT_TRUE(p.ok());
  for (const auto& v : test::read_vocab_vectors(base)) {
    std::vector<std::string_view> pieces;
    p->split(v.input, pieces);
    EXPECT_GE(v.ids.size(), pieces.size()) << vocab << ": '" << v.input << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Absent, AbsentVocabVectorsTest,
                         ::testing::Values(std::make_pair(std::string("llama-bpe"), std::string("llama-bpe")),
                                           std::make_pair(std::string("qwen2"), std::string("qwen2")),
                                           std::make_pair(std::string("deepseek-r1-qwen"),
                                                          std::string("deepseek-r1-qwen")),
                                           std::make_pair(std::string("command-r"), std::string("command-r")),
                                           std::make_pair(std::string("roberta-bpe"), std::string("roberta-bpe"))),
                         [](const auto& name_info) {
                           std::string n = name_info.param.first;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace sf::tok
