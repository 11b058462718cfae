// SentencePiece-style (SPM) encoding as llama.cpp does it for "llama" vocabularies: spaces
// become U+2581 ("▁"), the text is cut into UTF-8 characters, and adjacent symbols are
// merged greedily by the score of the token their concatenation forms (highest first,
// leftmost on ties) until no adjacent pair forms a token. Symbols that are not tokens fall
// back to <0xXX> byte tokens.
#include <algorithm>
#include <unordered_map>

#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"
#include "tokenizer/word_cache.h"

namespace sf::tok {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t start;  // byte offset in the escaped text
  uint32_t n;      // byte length; 0 once merged into its left neighbour
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t size;  // byte length of the pair when queued: detects outdated entries
};

struct BigramOrder {
  // Max-heap on score; among equal scores the leftmost pair comes first.
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

// Encodes one run of escaped text. Reuses its buffers across calls.
class SegmentEncoder {
 public:
  explicit SegmentEncoder(const TokenizerImpl& impl) : impl_(impl) {}

  void encode(std::string_view text, std::vector<int32_t>& out) {
    text_ = text;
    symbols_.clear();
    for (size_t offs = 0; offs < text.size();) {
      const size_t len = std::min(utf8_len_from_lead(static_cast<uint8_t>(text[offs])), text.size() - offs);
      const auto index = static_cast<int32_t>(symbols_.size());
      symbols_.push_back({index - 1, offs + len == text.size() ? -1 : index + 1, static_cast<uint32_t>(offs),
                          static_cast<uint32_t>(len)});
      offs += len;
    }
    heap_.clear();
    for (int32_t i = 1; i < static_cast<int32_t>(symbols_.size()); ++i) try_add(i - 1, i);
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), BigramOrder{});
      const Bigram b = heap_.back();
      heap_.pop_back();
      Symbol& l = symbols_[static_cast<size_t>(b.left)];
      Symbol& r = symbols_[static_cast<size_t>(b.right)];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // outdated entry
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) symbols_[static_cast<size_t>(r.next)].prev = b.left;
      try_add(l.prev, b.left);
      try_add(b.left, l.next);
    }
    // Every merged symbol is a token by construction; only single characters can be
    // missing from the vocabulary, and those are spelled with byte tokens.
    for (int32_t i = 0; i != -1; i = symbols_[static_cast<size_t>(i)].next) {
      const Symbol& sym = symbols_[static_cast<size_t>(i)];
      const std::string_view piece = text.substr(sym.start, sym.n);
      const int32_t id = impl_.find_token(piece);
      if (id != kNoToken) {
        out.push_back(id);
        continue;
      }
      for (char c : piece) {
        const int32_t byte_id = impl_.byte_tokens[static_cast<uint8_t>(c)];
        if (byte_id != kNoToken) {
          out.push_back(byte_id);
        } else if (impl_.spec.unk != kNoToken) {
          out.push_back(impl_.spec.unk);  // a vocabulary without byte fallback
        }
      }
    }
  }

 private:
  void try_add(int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols_[static_cast<size_t>(left)];
    const Symbol& r = symbols_[static_cast<size_t>(right)];
    const int32_t id = impl_.find_token(text_.substr(l.start, l.n + r.n));
    if (id == kNoToken) return;
    heap_.push_back({impl_.spec.tokens[static_cast<size_t>(id)].score, left, right, l.n + r.n});
    std::push_heap(heap_.begin(), heap_.end(), BigramOrder{});
  }

  const TokenizerImpl& impl_;
  std::string_view text_;
  std::vector<Symbol> symbols_;
  std::vector<Bigram> heap_;
};

}  // namespace

void spm_encode(const TokenizerImpl& impl, std::string_view text, bool add_space_prefix, std::vector<int32_t>& out) {
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 4 + 3);
  if (add_space_prefix) escaped += kSpaceMarker;
  for (char c : text) {
    if (c == ' ') {
      escaped += kSpaceMarker;
    } else {
      escaped += c;
    }
  }
  if (escaped.empty()) return;
  SegmentEncoder encoder(impl);
  if (!impl.spm_words_independent) {
    encoder.encode(escaped, out);
    return;
  }
  // Cut before every "▁" that follows another character: no token spans such a point, so
  // the global greedy merge order restricted to each word is the same as over the text.
  const std::string_view all(escaped);
  WordCache cache(all.size());
  auto emit = [&](std::string_view word) { cache.encode(word, encoder, out); };
  size_t word_start = 0;
  for (size_t i = 1; i + 3 <= all.size(); ++i) {
    // (In valid UTF-8 the lead byte of "▁" can only start a character.)
    if (all.compare(i, 3, kSpaceMarker) == 0 && (i < 3 || all.compare(i - 3, 3, kSpaceMarker) != 0)) {
      if (i > word_start) emit(all.substr(word_start, i - word_start));
      word_start = i;
    }
  }
  emit(all.substr(word_start));
}

}  // namespace sf::tok
