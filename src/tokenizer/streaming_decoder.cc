#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace sf {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Appends the valid UTF-8 of `bytes` to out, replacing each ill-formed byte by U+FFFD.
// `bytes` must not end in an incomplete-but-valid prefix (the caller holds that back).
void append_sanitized(std::string_view bytes, std::string& out) {
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t len = tok::utf8_valid_sequence_length(bytes, pos);
    if (len == 0) {
      out += kReplacement;
      ++pos;
    } else {
      out.append(bytes.substr(pos, len));
      pos += len;
    }
  }
}

}  // namespace

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, bool render_special)
    : tokenizer_(tokenizer), render_special_(render_special) {}

std::string StreamingDecoder::push(int32_t id) {
  if (!tokenizer_.is_valid(id)) {
    std::string out = flush();
    out += kReplacement;
    return out;
  }
  pending_ += tokenizer_.token_to_piece(id, render_special_);
  // Hold back a trailing partial character; everything before it is final.
  const size_t hold = tok::utf8_incomplete_tail(pending_);
  std::string out;
  append_sanitized(std::string_view(pending_).substr(0, pending_.size() - hold), out);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StreamingDecoder::flush() {
  std::string out;
  if (!pending_.empty()) out = kReplacement;  // an unfinished character
  pending_.clear();
  return out;
}

}  // namespace sf
