// Bad input gives a clear error, never a crash: invalid UTF-8, empty or missing
// vocabularies, unsupported tokenizers, token ids out of range.
#include <gtest/gtest.h>

#include "gguf/gguf_writer.h"
#include "tokenizer_test_util.h"

namespace sf {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Result<Tokenizer> tokenizer_from_metadata(const std::string& name,
                                          const std::vector<std::pair<std::string, gguf::Value>>& kv) {
  gguf::GgufWriter w;
  for (const auto& [k, v] : kv) w.set(k, v);
  const std::string path = test::scratch_dir("tokenizer_bad_input_" + name) + "/vocab.gguf";
  SF_RETURN_IF_ERROR(w.write(path));
  SF_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path));
  return Tokenizer::from_gguf(file);
}

gguf::Value strings(std::vector<std::string> items) {
  std::vector<gguf::Value> v;
  for (auto& s : items) v.push_back(gguf::Value::string(std::move(s)));
  return gguf::Value::array(gguf::ValueType::kString, std::move(v));
}

TEST(BadInput, InvalidUtf8IsRejectedWithItsOffset) {
  if (!test::vocab_present("llama-spm")) GTEST_SKIP();
  auto tok = test::load_vocab("llama-spm");
  ASSERT_TRUE(tok.has_value());
  const std::string cases[] = {
      std::string("abc\xFF"),  // never valid
      std::string("abc\xC3"),  // truncated sequence
      std::string("\x80"
                  "abc"),                // stray continuation byte
      std::string("a\xC0\xAF"),          // overlong '/'
      std::string("a\xED\xA0\x80"),      // UTF-16 surrogate
      std::string("a\xF4\x90\x80\x80"),  // past U+10FFFF
  };
  for (const std::string& text : cases) {
    auto ids = tok->encode(text, true, false);
    ASSERT_FALSE(ids.ok()) << "accepted invalid UTF-8";
    EXPECT_TRUE(contains(ids.status().message(), "not valid UTF-8")) << ids.status().message();
    EXPECT_TRUE(contains(ids.status().message(), "offset")) << ids.status().message();
  }
  // A NUL byte is valid UTF-8 and must not truncate the text.
  auto ids = tok->encode(std::string("a\0b", 3), false, false);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*tok->decode(*ids), std::string("a\0b", 3));
}

TEST(BadInput, EmptyVocabularyIsAnError) {
  auto tok = tokenizer_from_metadata(
      "empty", {{"tokenizer.ggml.model", gguf::Value::string("llama")}, {"tokenizer.ggml.tokens", strings({})}});
  ASSERT_FALSE(tok.ok());
  EXPECT_TRUE(contains(tok.status().message(), "vocabulary is empty")) << tok.status().message();

  VocabSpec spec;
  auto direct = Tokenizer::from_spec(spec);
  ASSERT_FALSE(direct.ok());
  EXPECT_TRUE(contains(direct.status().message(), "empty"));
}

TEST(BadInput, MissingOrUnsupportedTokenizerIsAnError) {
  auto none = tokenizer_from_metadata("none", {{"general.architecture", gguf::Value::string("llama")}});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(contains(none.status().message(), "no tokenizer")) << none.status().message();

  auto t5 = tokenizer_from_metadata(
      "t5", {{"tokenizer.ggml.model", gguf::Value::string("t5")}, {"tokenizer.ggml.tokens", strings({"a", "b"})}});
  ASSERT_FALSE(t5.ok());
  EXPECT_TRUE(contains(t5.status().message(), "unsupported tokenizer model 't5'"));

  auto pre = tokenizer_from_metadata("pre", {{"tokenizer.ggml.model", gguf::Value::string("gpt2")},
                                             {"tokenizer.ggml.pre", gguf::Value::string("made-up")},
                                             {"tokenizer.ggml.tokens", strings({"a", "b", "ab"})},
                                             {"tokenizer.ggml.merges", strings({"a b"})}});
  ASSERT_FALSE(pre.ok());
  EXPECT_TRUE(contains(pre.status().message(), "unknown pre-tokenizer 'made-up'"));

  auto no_merges = tokenizer_from_metadata("merges", {{"tokenizer.ggml.model", gguf::Value::string("gpt2")},
                                                      {"tokenizer.ggml.pre", gguf::Value::string("gpt-2")},
                                                      {"tokenizer.ggml.tokens", strings({"a", "b"})}});
  ASSERT_FALSE(no_merges.ok());
  EXPECT_TRUE(contains(no_merges.status().message(), "merges"));

  auto dup = tokenizer_from_metadata("dup", {{"tokenizer.ggml.model", gguf::Value::string("llama")},
                                             {"tokenizer.ggml.tokens", strings({"a", "b", "a"})}});
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(contains(dup.status().message(), "duplicate token"));
}

TEST(BadInput, TokenIdOutOfRange) {
  if (!test::vocab_present("gpt-2")) GTEST_SKIP();
  auto tok = test::load_vocab("gpt-2");
  ASSERT_TRUE(tok.has_value());
  for (int32_t bad : {-1, tok->n_vocab(), tok->n_vocab() + 1000, INT32_MIN, INT32_MAX}) {
    auto text = tok->decode({15496, bad});
    ASSERT_FALSE(text.ok());
    EXPECT_TRUE(contains(text.status().message(), "out of range")) << text.status().message();
    EXPECT_EQ(tok->token_to_piece(bad), "");
    EXPECT_EQ(tok->token_text(bad), "");
    EXPECT_FALSE(tok->is_eog(bad));
    StreamingDecoder stream(*tok);
    EXPECT_EQ(stream.push(bad), "\xEF\xBF\xBD");
  }
}

TEST(BadInput, EmptyTextGivesOnlySpecialTokens) {
  if (!test::vocab_present("llama-spm")) GTEST_SKIP();
  auto tok = test::load_vocab("llama-spm");
  ASSERT_TRUE(tok.has_value());
  EXPECT_TRUE(tok->encode("", false, false)->empty());
  EXPECT_EQ(*tok->encode("", true, false), std::vector<int32_t>{1});
  EXPECT_EQ(*tok->decode({}), "");
}

}  // namespace
}  // namespace sf
