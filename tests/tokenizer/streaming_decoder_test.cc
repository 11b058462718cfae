// The streaming detokenizer only ever emits complete UTF-8 and, for valid token streams,
// emits exactly what decode() would (without the SPM leading-space strip).
#include <gtest/gtest.h>

#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace sf {
namespace {

const std::string kText = "h\xC3\xA9llo \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x99\x82 \xD0\xBC\xD0\xB8\xD1\x80!";

void expect_streams_like_decode(const std::string& vocab) {
  if (!test::vocab_present(vocab)) GTEST_SKIP() << vocab << " absent";
  auto tok = test::load_vocab(vocab);
  ASSERT_TRUE(tok.has_value());
  auto ids = tok->encode(kText, /*add_special=*/true, false);
  ASSERT_TRUE(ids.ok());
  StreamingDecoder stream(*tok);
  std::string streamed;
  for (int32_t id : *ids) {
    const std::string chunk = stream.push(id);
    EXPECT_EQ(tok::find_invalid_utf8(chunk), std::string_view::npos) << "chunk is not UTF-8";
    streamed += chunk;
  }
  EXPECT_EQ(stream.pending_bytes(), 0u);
  streamed += stream.flush();
  DecodeOptions keep_space;
  keep_space.strip_space_prefix = false;
  EXPECT_EQ(streamed, *tok->decode(*ids, keep_space));
}

TEST(StreamingDecoder, ByteLevelBpeSplitsCharacters) { expect_streams_like_decode("gpt-2"); }
TEST(StreamingDecoder, SpmByteFallbackSplitsCharacters) { expect_streams_like_decode("llama-spm"); }

TEST(StreamingDecoder, HoldsBackAPartialCharacter) {
  if (!test::vocab_present("llama-spm")) GTEST_SKIP();
  auto tok = test::load_vocab("llama-spm");
  ASSERT_TRUE(tok.has_value());
  // 🙂 = F0 9F 99 82, spelled with four byte tokens in this vocabulary.
  const int32_t b[4] = {tok->find_token("<0xF0>"), tok->find_token("<0x9F>"), tok->find_token("<0x99>"),
                        tok->find_token("<0x82>")};
  StreamingDecoder stream(*tok);
  EXPECT_EQ(stream.push(b[0]), "");
  EXPECT_EQ(stream.push(b[1]), "");
  EXPECT_EQ(stream.push(b[2]), "");
  EXPECT_EQ(stream.pending_bytes(), 3u);
  EXPECT_EQ(stream.push(b[3]), "\xF0\x9F\x99\x82");
  EXPECT_EQ(stream.pending_bytes(), 0u);
}

TEST(StreamingDecoder, BrokenSequencesBecomeReplacementCharacters) {
  if (!test::vocab_present("llama-spm")) GTEST_SKIP();
  auto tok = test::load_vocab("llama-spm");
  ASSERT_TRUE(tok.has_value());
  const int32_t lead = tok->find_token("<0xE4>");
  const int32_t stray = tok->find_token("<0x80>");
  const int32_t a = tok->find_token("a");
  ASSERT_GE(a, 0);
  StreamingDecoder stream(*tok);
  EXPECT_EQ(stream.push(stray), "\xEF\xBF\xBD");  // can never be completed
  EXPECT_EQ(stream.push(lead), "");               // might still complete
  EXPECT_EQ(stream.push(a),
            "\xEF\xBF\xBD"
            "a");  // ... but did not
  EXPECT_EQ(stream.push(lead), "");
  EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");  // unfinished at the end
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamingDecoder, ControlTokensHiddenUnlessRequested) {
  if (!test::vocab_present("llama-spm")) GTEST_SKIP();
  auto tok = test::load_vocab("llama-spm");
  ASSERT_TRUE(tok.has_value());
  StreamingDecoder hidden(*tok);
  EXPECT_EQ(hidden.push(tok->eos_id()), "");
  StreamingDecoder shown(*tok, /*render_special=*/true);
  EXPECT_EQ(shown.push(tok->eos_id()), "</s>");
}

TEST(Utf8, IncompleteTail) {
  EXPECT_EQ(tok::utf8_incomplete_tail("abc"), 0u);
  EXPECT_EQ(tok::utf8_incomplete_tail("a\xE4"), 1u);
  EXPECT_EQ(tok::utf8_incomplete_tail("a\xE4\xBD"), 2u);
  EXPECT_EQ(tok::utf8_incomplete_tail("a\xE4\xBD\xA0"), 0u);
  EXPECT_EQ(tok::utf8_incomplete_tail("\xF0\x9F\x99"), 3u);
  EXPECT_EQ(tok::utf8_incomplete_tail("\xE0\x80"), 0u);  // overlong prefix: never completes
  EXPECT_EQ(tok::utf8_incomplete_tail("\x80\x80"), 0u);
}

}  // namespace
}  // namespace sf
