// Byte-level BPE encoding (GPT-2 style "gpt2" vocabularies), as llama.cpp does it: the
// pre-tokenizer cuts the text into words; each word's bytes are spelled in the GPT-2 byte
// alphabet; adjacent symbols are merged by merge rank (lowest first, leftmost on ties)
// until no adjacent pair has a merge. Symbols are tracked by token id so that a merge
// lookup is one integer hash probe.
#include <algorithm>

#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"
#include "tokenizer/word_cache.h"

namespace sf::tok {
namespace {

std::string byte_level(std::string_view raw) {
  std::string s;
  s.reserve(raw.size() * 2);
  for (char c : raw) s += byte_to_unicode(static_cast<uint8_t>(c));
  return s;
}

struct Symbol {
  int32_t id;  // token id of the symbol's text, or kNoToken
  int32_t prev;
  int32_t next;
  uint32_t start;  // offset in the raw (not byte-level spelled) word
  uint32_t n;      // raw byte length; 0 once merged into its left neighbour
};

struct Bigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  uint32_t left_n;  // lengths when queued: an entry is outdated once either changes
  uint32_t right_n;
  int32_t merged_id;
};

struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

class WordEncoder {
 public:
  explicit WordEncoder(const TokenizerImpl& impl) : impl_(impl) {}

  void encode(std::string_view word, std::vector<int32_t>& out) {
    if (impl_.spec.ignore_merges) {
      const int32_t whole = impl_.find_token(byte_level(word));
      if (whole != kNoToken) {
        out.push_back(whole);
        return;
      }
    }
    if (word.size() == 1) {  // one byte: its alphabet character is the token
      const int32_t id = impl_.byte_level_tokens[static_cast<uint8_t>(word[0])];
      if (id != kNoToken) {
        out.push_back(id);
        return;
      }
    }
    word_ = word;
    symbols_.clear();
    for (size_t i = 0; i < word.size(); ++i) {
      const auto index = static_cast<int32_t>(i);
      symbols_.push_back({impl_.byte_level_tokens[static_cast<uint8_t>(word[i])], index - 1,
                          i + 1 == word.size() ? -1 : index + 1, static_cast<uint32_t>(i), 1});
    }
    heap_.clear();  // keeps its capacity across words
    for (int32_t i = 1; i < static_cast<int32_t>(symbols_.size()); ++i) try_add(i - 1, i);
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), BigramOrder{});
      const Bigram b = heap_.back();
      heap_.pop_back();
      Symbol& l = symbols_[static_cast<size_t>(b.left)];
      Symbol& r = symbols_[static_cast<size_t>(b.right)];
      if (l.n != b.left_n || r.n != b.right_n || l.next != b.right) continue;
      l.n += r.n;
      l.id = b.merged_id;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) symbols_[static_cast<size_t>(r.next)].prev = b.left;
      try_add(l.prev, b.left);
      try_add(b.left, l.next);
    }
    for (int32_t i = 0; i != -1; i = symbols_[static_cast<size_t>(i)].next) {
      const Symbol& s = symbols_[static_cast<size_t>(i)];
      if (s.id != kNoToken) {
        out.push_back(s.id);
        continue;
      }
      // Not a token: llama.cpp looks up each byte of the byte-level spelling on its own,
      // which finds only the single-byte (ASCII) characters of the alphabet.
      for (char c : byte_level(word_.substr(s.start, s.n))) {
        const int32_t id = impl_.find_token(std::string_view(&c, 1));
        if (id != kNoToken) out.push_back(id);
      }
    }
  }

 private:
  void try_add(int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols_[static_cast<size_t>(left)];
    const Symbol& r = symbols_[static_cast<size_t>(right)];
    BpeMerge merge{};
    if (l.id != kNoToken && r.id != kNoToken) {
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l.id)) << 32) | static_cast<uint32_t>(r.id);
      const BpeMerge* found = impl_.merges_by_ids.find(key);
      if (!found) return;
      merge = *found;
    } else {
      if (impl_.merges_by_text.empty()) return;
      const std::string lt = byte_level(word_.substr(l.start, l.n));
      const std::string rt = byte_level(word_.substr(r.start, r.n));
      auto it = impl_.merges_by_text.find(lt + " " + rt);
      if (it == impl_.merges_by_text.end()) return;
      merge = {it->second, impl_.find_token(lt + rt)};
    }
    heap_.push_back({merge.rank, left, right, l.n, r.n, merge.merged_id});
    std::push_heap(heap_.begin(), heap_.end(), BigramOrder{});
  }

  const TokenizerImpl& impl_;
  std::string_view word_;
  std::vector<Symbol> symbols_;
  std::vector<Bigram> heap_;  // max-heap under BigramOrder: lowest rank, leftmost on top
};

}  // namespace

void build_bpe_tables(TokenizerImpl& impl) {
  for (int b = 0; b < 256; ++b) {
    impl.byte_level_tokens[b] = impl.find_token(byte_to_unicode(static_cast<uint8_t>(b)));
  }
  const auto& merges = impl.spec.merges;
  impl.merges_by_ids.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& m = merges[rank];
    // Split at the first space after the first character, as llama.cpp does.
    const size_t pos = m.find(' ', 1);
    if (pos == std::string::npos) continue;
    const std::string_view left(m.data(), pos);
    const std::string_view right(m.data() + pos + 1, m.size() - pos - 1);
    const int32_t l = impl.find_token(left);
    const int32_t r = impl.find_token(right);
    if (l != kNoToken && r != kNoToken) {
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
      const int32_t merged = impl.find_token(std::string(left) + std::string(right));
      // emplace keeps the first (lowest) rank of a duplicated merge, like llama.cpp.
      impl.merges_by_ids.emplace(key, BpeMerge{static_cast<int32_t>(rank), merged});
    } else {
      impl.merges_by_text.emplace(m, static_cast<int32_t>(rank));
    }
  }
}

void bpe_encode(const TokenizerImpl& impl, std::string_view text, std::vector<int32_t>& out) {
  std::vector<std::string_view> words;
  impl.pre_tokenizer->split(text, words);
  WordEncoder encoder(impl);
  WordCache cache(text.size());
  for (std::string_view w : words) cache.encode(w, encoder, out);
}

}  // namespace sf::tok
