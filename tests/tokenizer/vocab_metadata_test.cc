// Vocabulary metadata: special ids and their defaults, end-of-generation tokens, vocabulary
// identity for draft/target pairs, and the Unicode tables behind the WordPiece normaliser.
#include <gtest/gtest.h>

#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace sf {
namespace {

std::optional<Tokenizer> load_model(const std::string& rel) {
  auto file = gguf::GgufFile::open(test::shared_path(rel));
  if (!file.ok()) return std::nullopt;
  auto tok = Tokenizer::from_gguf(*file);
  if (!tok.ok()) return std::nullopt;
  return std::move(tok).value();
}

TEST(VocabMetadata, SpmDefaults) {
  SF_SKIP_WITHOUT_SHARED();
  auto tok = load_model("models/stories260K.gguf");
  ASSERT_TRUE(tok.has_value());
  EXPECT_EQ(tok->type(), VocabType::kSpm);
  EXPECT_EQ(tok->n_vocab(), 512);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->unk_id(), 0);
  EXPECT_TRUE(tok->default_add_bos());  // no add_bos_token key: SPM adds BOS
  EXPECT_TRUE(tok->is_eog(2));
  EXPECT_FALSE(tok->is_eog(1));
  EXPECT_EQ(tok->spec().sep, kNoToken);      // 0xFFFFFFFF in the file means "none"
  EXPECT_EQ(tok->token_to_piece(13), "\n");  // <0x0A>
  EXPECT_EQ(tok->token_to_piece(1), "<s>");
  EXPECT_EQ(tok->token_to_piece(1, /*render_special=*/false), "");
}

TEST(VocabMetadata, BpeDefaults) {
  SF_SKIP_WITHOUT_SHARED();
  auto tok = load_model("reference/models/synth-qwen2-gpt2.gguf");
  ASSERT_TRUE(tok.has_value());
  EXPECT_EQ(tok->type(), VocabType::kBpe);
  EXPECT_EQ(tok->pre_tokenizer_name(), "gpt-2");
  EXPECT_FALSE(tok->default_add_bos());  // no add_bos_token key: BPE adds none
  EXPECT_EQ(tok->eos_id(), 50256);
  EXPECT_TRUE(tok->is_eog(50256));
  EXPECT_EQ(tok->token_to_piece(198), "\n");  // "Ċ"
  EXPECT_EQ(tok->token_to_piece(220), " ");   // "Ġ"
}

TEST(VocabMetadata, EndOfGenerationTokensByText) {
  if (!test::vocab_present("phi-3")) GTEST_SKIP();
  auto tok = test::load_vocab("phi-3");
  ASSERT_TRUE(tok.has_value());
  EXPECT_TRUE(tok->is_eog(tok->find_token("<|end|>")));
  EXPECT_TRUE(tok->is_eog(tok->find_token("<|endoftext|>")));
  EXPECT_FALSE(tok->is_eog(tok->find_token("<|user|>")));
  // Both <|endoftext|> and <|end|> qualify as EOT by text; either way it ends generation.
  EXPECT_TRUE(tok->is_eog(tok->eot_id()));
}

TEST(VocabMetadata, SameVocabulary) {
  SF_SKIP_WITHOUT_SHARED();
  auto stories = load_model("models/stories260K.gguf");
  auto tok512 = load_model("reference/models/synth-llama-tok512.gguf");
  auto qwen3 = load_model("reference/models/synth-qwen3-tok512-Q8_0.gguf");
  auto llama3 = load_model("reference/models/synth-llama3-spm.gguf");
  auto gpt2 = load_model("reference/models/synth-qwen2-gpt2.gguf");
  ASSERT_TRUE(stories && tok512 && qwen3 && llama3 && gpt2);
  EXPECT_TRUE(stories->same_vocabulary(*tok512));
  EXPECT_TRUE(tok512->same_vocabulary(*qwen3));
  EXPECT_TRUE(stories->same_vocabulary(*stories));
  EXPECT_FALSE(stories->same_vocabulary(*llama3));
  EXPECT_FALSE(llama3->same_vocabulary(*gpt2));
  if (test::vocab_present("llama-spm")) {
    EXPECT_TRUE(llama3->same_vocabulary(*test::load_vocab("llama-spm")));
  }
}

TEST(UnicodeTables, CategoriesCaseAndDecomposition) {
  using namespace tok;
  EXPECT_TRUE(codepoint_flags('a') & kCpLetter);
  EXPECT_TRUE(codepoint_flags(0x4E2D) & kCpLetter);       // 中
  EXPECT_TRUE(codepoint_flags(0x0663) & kCpNumber);       // ٣
  EXPECT_TRUE(codepoint_flags(0xBD) & kCpNumber);         // ½
  EXPECT_TRUE(codepoint_flags(0x0301) & kCpAccentMark);   // combining acute
  EXPECT_TRUE(codepoint_flags(0x3002) & kCpPunctuation);  // 。
  EXPECT_TRUE(codepoint_flags('$') & kCpSymbol);
  EXPECT_TRUE(codepoint_flags(0x1F600) & kCpSymbol);  // 😀
  EXPECT_TRUE(codepoint_flags(0x0378) & kCpControl);  // unassigned
  EXPECT_TRUE(is_whitespace(0x3000));
  EXPECT_TRUE(is_whitespace(0x85));
  EXPECT_FALSE(is_whitespace(0x180E));
  EXPECT_FALSE(is_whitespace(0x200B));
  EXPECT_EQ(to_lower('A'), static_cast<uint32_t>('a'));
  EXPECT_EQ(to_lower(0x0416), 0x0436u);  // Ж -> ж
  EXPECT_EQ(to_lower('a'), static_cast<uint32_t>('a'));
  EXPECT_EQ(nfd_base(0xE9), static_cast<uint32_t>('e'));    // é
  EXPECT_EQ(nfd_base(0x1EF1), static_cast<uint32_t>('u'));  // ự
  EXPECT_EQ(nfd_base('x'), static_cast<uint32_t>('x'));
  for (int b = 0; b < 256; ++b) {
    size_t pos = 0;
    const uint32_t cp = decode_utf8(byte_to_unicode(static_cast<uint8_t>(b)), pos);
    EXPECT_EQ(unicode_to_byte(cp), b);
  }
  EXPECT_EQ(byte_to_unicode(' '), "\xC4\xA0");  // Ġ
}

}  // namespace
}  // namespace sf
