// Text <-> token ids for the vocabularies GGUF files carry, reproducing llama.cpp's
// tokenizer token for token:
//  - SPM ("llama"): SentencePiece-style score merges with byte fallback and the leading
//    space rule;
//  - BPE ("gpt2"): byte-level BPE with the pre-tokenizer named by tokenizer.ggml.pre
//    (pretokenizer.h lists them);
//  - WPM ("bert"): WordPiece with BERT normalisation.
// Special tokens: control tokens ("<s>", "<|im_start|>") are recognised in the text only
// when the caller asks (parse_special); otherwise they are tokenized as plain text.
// User-defined tokens are always recognised, as in llama.cpp and Hugging Face.
//
// Ownership and threads: a Tokenizer is an immutable value; copies share the tables, and
// all methods are const and safe to call from any number of threads at once.
// Failure: bad input (invalid UTF-8, unknown token ids) returns an error Status; nothing
// aborts on user input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "tokenizer/vocab.h"

namespace sf {

namespace tok {
struct TokenizerImpl;
}

struct DecodeOptions {
  // Render control/unknown tokens ("<s>", "<|im_end|>") as their text; hidden by default.
  bool render_special = false;
  // SPM vocabularies put a space before the first word of a text (and after every special
  // token); remove it again so that decode(encode(text)) == text.
  bool strip_space_prefix = true;
};

class Tokenizer {
 public:
  // Builds the tokenizer described by a GGUF file's tokenizer.* metadata. Errors name the
  // file: no vocabulary, an empty one, an unsupported model or pre-tokenizer, duplicates.
  static Result<Tokenizer> from_gguf(const gguf::GgufFile& file);
  // Builds a tokenizer from an explicit description (tests, synthetic vocabularies).
  static Result<Tokenizer> from_spec(VocabSpec spec);

  // text -> ids. add_special adds BOS/EOS as the vocabulary asks: tokenizer.ggml.add_bos_token
  // / add_eos_token, or where absent llama.cpp's defaults (SPM adds BOS, BPE does not, except
  // the pre-tokenizers llama.cpp marks as BOS-adding: llama-bpe family, tekken, chameleon;
  // WPM adds [CLS] ... [SEP]). parse_special recognises control tokens written in the text.
  // Error: text is not valid UTF-8 (the byte offset is named).
  Result<std::vector<int32_t>> encode(std::string_view text, bool add_special, bool parse_special) const;
  bool default_add_bos() const;
  bool default_add_eos() const;

  // The bytes a token stands for, as llama.cpp's token_to_piece renders it with special
  // tokens shown: SPM "▁" as a space, <0xXX> tokens as the raw byte, BPE tokens mapped back
  // from the byte alphabet. May be a partial UTF-8 sequence. "" for an out-of-range id.
  std::string token_to_piece(int32_t id, bool render_special = true) const;
  // ids -> text. Error for an id outside [0, n_vocab). The result may contain invalid UTF-8
  // when the ids split a character (use StreamingDecoder for display).
  Result<std::string> decode(const std::vector<int32_t>& ids) const;
  Result<std::string> decode(const std::vector<int32_t>& ids, const DecodeOptions& options) const;

  int32_t n_vocab() const;
  int32_t bos_id() const;  // kNoToken (-1) when the vocabulary has none
  int32_t eos_id() const;
  int32_t eot_id() const;
  int32_t unk_id() const;
  bool is_valid(int32_t id) const { return id >= 0 && id < n_vocab(); }
  // End of generation: EOS, EOT, EOM, FIM pad/repo/sep and the usual end-of-turn texts.
  bool is_eog(int32_t id) const;
  bool is_control(int32_t id) const;
  const std::vector<int32_t>& eog_ids() const;

  // The token's text as stored in the vocabulary ("▁the", "Ġthe", "<0x0A>"); "" if invalid.
  const std::string& token_text(int32_t id) const;
  uint32_t token_attr(int32_t id) const;            // TokenAttr bits; 0 if invalid
  int32_t find_token(std::string_view text) const;  // exact text lookup, kNoToken if absent

  VocabType type() const;
  const std::string& pre_tokenizer_name() const;  // BPE: the pre-tokenizer in use; else ""
  const VocabSpec& spec() const;                  // the metadata it was built from

  // Same token texts and token types in the same order (and the same model type): ids mean
  // the same thing, so a draft model's tokens can be fed to the target.
  bool same_vocabulary(const Tokenizer& other) const;

 private:
  explicit Tokenizer(std::shared_ptr<const tok::TokenizerImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const tok::TokenizerImpl> impl_;
};

// Incremental detokenizer for streaming generated tokens to a terminal or a socket: every
// chunk it returns is complete, valid UTF-8. A token that ends inside a multi-byte
// character is held back until the character completes; bytes that can never complete a
// character are replaced by U+FFFD. No leading-space stripping: generated tokens continue
// a prompt. Not thread-safe (one per stream); keeps its own copy of the tokenizer.
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer, bool render_special = false);
  // Text that became complete with this token (possibly ""). An out-of-range id renders as
  // U+FFFD rather than failing the stream.
  std::string push(int32_t id);
  // Whatever is still held back, with an unfinished character replaced by U+FFFD.
  std::string flush();
  // Bytes currently held back (0..3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  Tokenizer tokenizer_;
  bool render_special_;
  std::string pending_;
};

}  // namespace sf
