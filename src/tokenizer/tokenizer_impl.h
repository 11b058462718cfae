// Internal: the lookup tables a Tokenizer builds once from a VocabSpec, shared (read-only)
// by the encoders in spm_encoder.cc, bpe_encoder.cc, wpm_encoder.cc and by the special-token
// splitter. Not part of the public interface; include tokenizer/tokenizer.h instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/vocab.h"

namespace sf::tok {

// Text -> id for the whole vocabulary: an open-addressing table of (hash, id) that
// compares against the token texts it indexes. SPM encoding looks up every candidate pair,
// and std::unordered_map<std::string> node chasing was most of its time.
class TokenIndex {
 public:
  // `tokens` must outlive the index and keep its texts unchanged.
  void build(const std::vector<VocabToken>* tokens) {
    tokens_ = tokens;
    size_t cap = 16;
    while (cap < 2 * tokens->size()) cap <<= 1;
    slots_.assign(cap, Slot{0, kNoToken});
  }
  // Adds tokens_[id]; returns the id already holding that text, or kNoToken.
  int32_t insert(int32_t id) {
    const std::string& text = (*tokens_)[static_cast<size_t>(id)].text;
    const uint64_t h = hash(text);
    size_t i = static_cast<size_t>(h) & (slots_.size() - 1);
    for (; slots_[i].id != kNoToken; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].hash == static_cast<uint32_t>(h >> 32) && text_of(slots_[i].id) == text) {
        return slots_[i].id;
      }
    }
    slots_[i] = {static_cast<uint32_t>(h >> 32), id};
    return kNoToken;
  }
  int32_t find(std::string_view text) const {
    const uint64_t h = hash(text);
    for (size_t i = static_cast<size_t>(h) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (s.id == kNoToken) return kNoToken;
      if (s.hash == static_cast<uint32_t>(h >> 32) && text_of(s.id) == text) return s.id;
    }
  }

 private:
  struct Slot {
    uint32_t hash;  // high half of the 64-bit hash (the low half picked the slot)
    int32_t id;
  };
  std::string_view text_of(int32_t id) const { return (*tokens_)[static_cast<size_t>(id)].text; }
  static uint64_t hash(std::string_view s) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (s.size() * 0xff51afd7ed558ccdull);
    const char* p = s.data();
    size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t w;
      __builtin_memcpy(&w, p, 8);
      h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
    }
    uint64_t w = 0;
    __builtin_memcpy(&w, p, n);
    h = (h ^ w) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
  }
  const std::vector<VocabToken>* tokens_ = nullptr;
  std::vector<Slot> slots_;
};

// A byte-wise trie over the texts of the special tokens, used to find which of them occur
// in a text in one pass (there can be thousands, e.g. deepseek's user-defined tokens).
class SpecialTokenTrie {
 public:
  SpecialTokenTrie() {
    for (int32_t& r : root_) r = -1;
  }
  void insert(std::string_view text, int32_t id);
  // Calls visit(id) for every special token occurring anywhere in text (possibly repeated).
  template <typename Visit>
  void for_each_occurrence(std::string_view text, Visit&& visit) const {
    for (size_t start = 0; start < text.size(); ++start) {
      // Most positions fail on the first byte; the root has a direct table.
      int32_t node = root_[static_cast<uint8_t>(text[start])];
      for (size_t i = start + 1; node >= 0; ++i) {
        if (nodes_[static_cast<size_t>(node)].id >= 0) visit(nodes_[static_cast<size_t>(node)].id);
        if (i == text.size()) break;
        node = child(node, static_cast<uint8_t>(text[i]));
      }
    }
  }

 private:
  struct Node {
    int32_t id = -1;
    std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
  };
  int32_t child(int32_t node, uint8_t byte) const;
  std::vector<Node> nodes_{Node{}};
  int32_t root_[256];  // child of the root per byte, -1 if none
};

// Open-addressing hash map from a 64-bit key to a small value: BPE merge lookups are the
// hot loop of BPE encoding, and std::unordered_map's node chasing dominated it. The key
// ~0 is reserved to mark empty slots (ids are < 2^31, so real keys never equal it).
template <typename Value>
class FlatMap64 {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    rehash(cap);
  }
  // Inserts unless the key exists (first insertion wins, like emplace).
  void emplace(uint64_t key, const Value& value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    size_t i = index(key);
    while (slots_[i].key != kEmpty) {
      if (slots_[i].key == key) return;
      i = (i + 1) & (slots_.size() - 1);
    }
    slots_[i] = {key, value};
    ++size_;
  }
  const Value* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = index(key);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    Value value{};
  };
  size_t index(uint64_t key) const {
    key ^= key >> 33;  // murmur3 finaliser: ids are small and dense, spread them
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return static_cast<size_t>(key) & (slots_.size() - 1);
  }
  void rehash(size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != kEmpty) emplace(s.key, s.value);
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

struct BpeMerge {
  int32_t rank;
  int32_t merged_id;  // kNoToken when the merged text is not itself a token
};

struct TokenizerImpl {
  VocabSpec spec;
  TokenIndex token_index;
  size_t max_token_len = 0;

  // Special tokens in the order llama.cpp splits them out of the text: longest text first
  // (ties by id). Control/unknown ones are split out only when parsing specials;
  // user-defined ones always.
  std::vector<int32_t> special_tokens;
  SpecialTokenTrie special_trie;
  std::vector<int32_t> eog_ids;  // sorted

  // Rendered text of each token (control tokens as their text) and whether it is hidden
  // unless special tokens are rendered (control and unknown tokens).
  std::vector<std::string> pieces;
  std::vector<uint8_t> piece_is_special;

  // SPM: id of the byte-fallback token for each byte (<0xXX>, or the raw byte), or -1.
  int32_t byte_tokens[256];
  // SPM: no token has "▁" right after another character, so no merge can cross the
  // boundary before a word-initial "▁" and words can be encoded independently.
  bool spm_words_independent = false;

  // BPE.
  std::optional<PreTokenizer> pre_tokenizer;
  FlatMap64<BpeMerge> merges_by_ids;  // key: left id << 32 | right id
  // Merges whose halves are not tokens (malformed but possible): key "left right".
  std::unordered_map<std::string, int32_t> merges_by_text;
  int32_t byte_level_tokens[256];  // id of the single-byte-alphabet token per byte, or -1

  int32_t find_token(std::string_view text) const { return token_index.find(text); }
  uint32_t attr(int32_t id) const { return spec.tokens[static_cast<size_t>(id)].attr; }
};

// Encoders. Each appends the ids for one text fragment (no special tokens inside) to out.
// `text` is valid UTF-8.
void spm_encode(const TokenizerImpl& impl, std::string_view text, bool add_space_prefix, std::vector<int32_t>& out);
void bpe_encode(const TokenizerImpl& impl, std::string_view text, std::vector<int32_t>& out);
void wpm_encode(const TokenizerImpl& impl, std::string_view text, std::vector<int32_t>& out);

// BPE setup: the merge tables and the byte-level alphabet ids.
void build_bpe_tables(TokenizerImpl& impl);

// A piece of the input after special tokens are split out: either text or one token.
struct Fragment {
  int32_t token = kNoToken;  // kNoToken: text
  std::string_view text;
};
// Splits text into fragments the way llama.cpp's tokenizer_st_partition does.
std::vector<Fragment> split_special_tokens(const TokenizerImpl& impl, std::string_view text, bool parse_special);

}  // namespace sf::tok
