// The tokenizer description a GGUF file carries (`tokenizer.*` metadata), read into plain
// data before any lookup tables are built. Defaults for absent keys follow llama.cpp's
// llama_vocab::load so that token ids agree with llama.cpp for the same file:
//  - SPM ("llama"): BOS 1, EOS 2, UNK 0, add BOS, add a space prefix;
//  - BPE ("gpt2"): BOS = EOS = 11 (when in range), no BOS, except the pre-tokenizers that
//    llama.cpp marks as BOS-adding (llama-bpe family, tekken, chameleon);
//  - WPM ("bert"): [CLS] 101 as BOS, [UNK] 100, [SEP] 102, adds both.
// A special-token id outside the vocabulary (e.g. 0xFFFFFFFF for "none") leaves the default.
//
// VocabSpec is a value type; building one never touches global state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"

namespace sf {

enum class VocabType { kSpm, kBpe, kWpm };
const char* vocab_type_name(VocabType type);

// Token attributes, as bits (llama.cpp's llama_token_attr, derived from the GGUF
// token_type array: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 7,  // a parsed special token swallows whitespace on its left
  kAttrRstrip = 1u << 8,  // ... and on its right
};

struct VocabToken {
  std::string text;
  float score = 0.0f;
  uint32_t attr = kAttrNormal;
};

constexpr int32_t kNoToken = -1;

struct VocabSpec {
  VocabType type = VocabType::kSpm;
  std::string model;       // tokenizer.ggml.model ("llama", "gpt2", "bert")
  std::string pre;         // tokenizer.ggml.pre; "" when absent
  std::string model_name;  // general.name; llama.cpp keys some token attributes on it
  std::vector<VocabToken> tokens;
  std::vector<std::string> merges;  // BPE only: "left right", in rank order

  int32_t bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken;
  int32_t sep = kNoToken, pad = kNoToken, mask = kNoToken;
  int32_t fim_pre = kNoToken, fim_suf = kNoToken, fim_mid = kNoToken;
  int32_t fim_pad = kNoToken, fim_rep = kNoToken, fim_sep = kNoToken;

  bool add_bos = false;
  bool add_eos = false;
  bool add_sep = false;           // WPM: [SEP] at the end
  bool add_space_prefix = false;  // SPM: "▁" before the first word of every text fragment
  bool ignore_merges = false;     // BPE: a pre-tokenized word that is a token is used whole
  bool lowercase = true;          // WPM normaliser
  bool strip_accents = true;      // WPM normaliser

  std::string chat_template;  // tokenizer.chat_template, "" when absent
};

// Reads the tokenizer metadata of a GGUF file. Errors (with the file name) when the file
// has no tokenizer, an unsupported tokenizer model, or inconsistent arrays.
Result<VocabSpec> read_vocab_spec(const gguf::GgufFile& file);

}  // namespace sf
