// Unicode helpers for the tokenizer: strict UTF-8 validation and decoding, the GPT-2
// byte-level alphabet, and the per-codepoint data (category flags, lowercase, NFD base
// character) that the WordPiece normaliser needs. The pre-tokenizer regexes themselves use
// PCRE2's Unicode tables (pretokenizer.h); these tables come from unicode_tables.cc, which
// gen_unicode_tables.py generates.
//
// Everything here is stateless or built once on first use (thread-safe statics).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sf::tok {

// ---- UTF-8 ---------------------------------------------------------------------------

// Sequence length announced by a lead byte, by its high nibble only (1 for ASCII and for
// stray continuation bytes). This is how llama.cpp cuts text into symbols; it is only used
// on text that has already been validated.
inline size_t utf8_len_from_lead(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Length of the well-formed UTF-8 sequence starting at s[pos] (1..4), or 0 when the bytes
// there are not a complete, well-formed sequence (bad lead, bad continuation, overlong
// form, surrogate, > U+10FFFF, or truncated by the end of s).
size_t utf8_valid_sequence_length(std::string_view s, size_t pos);

// Byte offset of the first ill-formed byte in s, or std::string_view::npos if s is valid.
size_t find_invalid_utf8(std::string_view s);

// Decodes the codepoint at s[pos] and advances pos. Requires valid UTF-8 at pos.
uint32_t decode_utf8(std::string_view s, size_t& pos);

void append_utf8(uint32_t cp, std::string& out);

// Number of bytes at the end of s that form an incomplete (but so far well-formed) UTF-8
// sequence, 0..3. Used by the streaming decoder to hold back a partial character.
size_t utf8_incomplete_tail(std::string_view s);

// ---- GPT-2 byte-level alphabet --------------------------------------------------------

// The printable character GPT-2 style BPE vocabularies use for a raw byte, as UTF-8.
const std::string& byte_to_unicode(uint8_t byte);
// Inverse mapping: the byte for a codepoint of that alphabet, or -1.
int unicode_to_byte(uint32_t cp);

// ---- Codepoint properties ---------------------------------------------------------------

// Category bits (same meaning per bit as llama.cpp's unicode flags).
enum CodepointFlag : uint16_t {
  kCpNumber = 1 << 1,       // \p{N}
  kCpLetter = 1 << 2,       // \p{L}
  kCpSeparator = 1 << 3,    // \p{Z}
  kCpAccentMark = 1 << 4,   // \p{M}
  kCpPunctuation = 1 << 5,  // \p{P}
  kCpSymbol = 1 << 6,       // \p{S}
  kCpControl = 1 << 7,      // \p{C}, including unassigned codepoints
};

uint16_t codepoint_flags(uint32_t cp);
// The Unicode White_Space property (what \s means in the tokenizers' reference regexes).
bool is_whitespace(uint32_t cp);
uint32_t to_lower(uint32_t cp);
// First codepoint of the canonical decomposition ("é" -> "e"); cp itself if none.
uint32_t nfd_base(uint32_t cp);

// Table layouts shared with the generated unicode_tables.cc.
struct FlagRange {
  uint32_t first;
  uint16_t flags;
};
struct CodepointPair {
  uint32_t from;
  uint32_t to;
};
struct NfdRange {
  uint32_t first;
  uint32_t last;
  uint32_t base;
};
namespace tables {
extern const FlagRange kFlagRanges[];
extern const size_t kFlagRangeCount;
extern const CodepointPair kLowercase[];
extern const size_t kLowercaseCount;
extern const NfdRange kNfdRanges[];
extern const size_t kNfdRangeCount;
}  // namespace tables

}  // namespace sf::tok
