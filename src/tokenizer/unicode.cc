#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>

namespace sf::tok {

size_t utf8_valid_sequence_length(std::string_view s, size_t pos) {
  const size_t n = s.size();
  if (pos >= n) return 0;
  const uint8_t b0 = static_cast<uint8_t>(s[pos]);
  if (b0 < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;  // continuation byte, C0/C1 (always overlong) or F5..FF
  }
  if (pos + len > n) return 0;
  for (size_t i = 1; i < len; ++i) {
    const uint8_t b = static_cast<uint8_t>(s[pos + i]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  if (cp > 0x10FFFF) return 0;
  return len;
}

size_t find_invalid_utf8(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    // ASCII fast path: most text is ASCII, check 8 bytes at a time.
    while (pos + 8 <= s.size()) {
      uint64_t w;
      __builtin_memcpy(&w, s.data() + pos, 8);
      if (w & 0x8080808080808080ull) break;
      pos += 8;
    }
    if (pos >= s.size()) break;
    const size_t len = utf8_valid_sequence_length(s, pos);
    if (len == 0) return pos;
    pos += len;
  }
  return std::string_view::npos;
}

uint32_t decode_utf8(std::string_view s, size_t& pos) {
  const uint8_t b0 = static_cast<uint8_t>(s[pos]);
  if (b0 < 0x80) {
    pos += 1;
    return b0;
  }
  const size_t len = utf8_len_from_lead(b0);
  uint32_t cp = len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t i = 1; i < len && pos + i < s.size(); ++i) {
    cp = (cp << 6) | (static_cast<uint8_t>(s[pos + i]) & 0x3F);
  }
  pos += len;
  return cp;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t utf8_incomplete_tail(std::string_view s) {
  // Walk back over at most 3 continuation bytes to the lead byte of the last sequence.
  const size_t n = s.size();
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    const uint8_t b = static_cast<uint8_t>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte, keep looking for the lead
    if (b < 0x80) return 0;
    size_t need;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 3;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 4;
    } else {
      return 0;  // not a lead byte: nothing could complete it
    }
    if (back >= need) return 0;  // the last sequence is complete (or over-long: not ours)
    // Check the partial sequence is a prefix of something valid (e.g. E0 80 never is).
    std::string probe(s.substr(n - back));
    static const char kFill[4] = {'\x80', '\xBF', '\x90', '\x8F'};
    for (char f : kFill) {
      std::string t = probe;
      while (t.size() < need) t.push_back(f);
      if (utf8_valid_sequence_length(t, 0) == need) return back;
    }
    return 0;
  }
  return 0;
}

namespace {

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the other 68
// bytes to U+0100.. in byte order, so every byte has a visible, non-space stand-in.
struct ByteAlphabet {
  std::array<std::string, 256> to_unicode;
  std::array<int16_t, 512> to_byte;  // indexed by codepoint (< 0x144 are all we need)
  ByteAlphabet() {
    to_byte.fill(-1);
    auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const int cp = printable(b) ? b : next++;
      append_utf8(static_cast<uint32_t>(cp), to_unicode[b]);
      to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteAlphabet& byte_alphabet() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

}  // namespace

const std::string& byte_to_unicode(uint8_t byte) { return byte_alphabet().to_unicode[byte]; }

int unicode_to_byte(uint32_t cp) { return cp < 512 ? byte_alphabet().to_byte[cp] : -1; }

uint16_t codepoint_flags(uint32_t cp) {
  if (cp > 0x10FFFF) return 0;
  const FlagRange* begin = tables::kFlagRanges;
  const FlagRange* end = begin + tables::kFlagRangeCount;
  const FlagRange* it = std::upper_bound(begin, end, cp, [](uint32_t v, const FlagRange& r) { return v < r.first; });
  return (it - 1)->flags;
}

bool is_whitespace(uint32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

uint32_t to_lower(uint32_t cp) {
  const CodepointPair* begin = tables::kLowercase;
  const CodepointPair* end = begin + tables::kLowercaseCount;
  const CodepointPair* it =
      std::lower_bound(begin, end, cp, [](const CodepointPair& p, uint32_t v) { return p.from < v; });
  return (it != end && it->from == cp) ? it->to : cp;
}

uint32_t nfd_base(uint32_t cp) {
  const NfdRange* begin = tables::kNfdRanges;
  const NfdRange* end = begin + tables::kNfdRangeCount;
  const NfdRange* it = std::upper_bound(begin, end, cp, [](uint32_t v, const NfdRange& r) { return v < r.first; });
  if (it == begin) return cp;
  --it;
  return (cp >= it->first && cp <= it->last) ? it->base : cp;
}

}  // namespace sf::tok
