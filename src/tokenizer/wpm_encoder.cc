// WordPiece (BERT, "bert" vocabularies) as llama.cpp does it: a BERT-style normaliser
// (accents stripped through the NFD base character, lowercase, control characters dropped,
// punctuation and CJK ideographs split into single-character words), then greedy longest
// match per word, with a word-initial "▁" standing in for WordPiece's absent "##". A word
// that cannot be spelled entirely becomes [UNK].
#include <algorithm>

#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

namespace sf::tok {
namespace {

// The ranges BERT's tokenizer treats as CJK (as in the HF Rust implementation, whose
// Extension E start is 0x2B920 rather than 0x2B820).
bool is_chinese_char(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::vector<std::string> normalize_words(const VocabSpec& spec, std::string_view text) {
  std::vector<std::string> words(1);
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp = decode_utf8(text, pos);
    if (spec.strip_accents) cp = nfd_base(cp);
    if (is_whitespace(cp)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    const uint16_t flags = codepoint_flags(cp);
    if (cp == 0 || cp == 0xFFFD || (flags & kCpControl)) continue;
    if (spec.strip_accents && (flags & kCpAccentMark)) continue;
    std::string s;
    append_utf8(spec.lowercase ? to_lower(cp) : cp, s);
    if ((flags & kCpPunctuation) || (cp < 0x7F && (flags & kCpSymbol)) || is_chinese_char(cp)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = std::move(s);
      words.emplace_back();
    } else {
      words.back() += s;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

void wpm_encode(const TokenizerImpl& impl, std::string_view text, std::vector<int32_t>& out) {
  for (const std::string& word : normalize_words(impl.spec, text)) {
    if (word.empty()) continue;
    const std::string spelled = "\xE2\x96\x81" + word;
    const size_t n = spelled.size();
    const size_t start = out.size();
    for (size_t i = 0; i < n; ++i) {
      bool matched = false;
      for (size_t j = std::min(n, i + impl.max_token_len + 1); j > i; --j) {
        const int32_t id = impl.find_token(std::string_view(spelled).substr(i, j - i));
        if (id != kNoToken) {
          out.push_back(id);
          matched = true;
          i = j - 1;
          break;
        }
      }
      if (!matched) {
        out.resize(start);  // the whole word is unknown, not just this part
        break;
      }
    }
    if (out.size() == start && impl.spec.unk != kNoToken) out.push_back(impl.spec.unk);
  }
}

}  // namespace sf::tok
