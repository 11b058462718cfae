// Splitting special tokens out of the input text before the encoders run.
//
// llama.cpp (tokenizer_st_partition) takes the special tokens longest first and, for each,
// cuts every remaining text fragment at each occurrence. That order matters when special
// texts overlap, so it is reproduced exactly; the trie only finds which special tokens
// occur at all, so that thousands of absent ones cost one scan instead of one search each.
#include <algorithm>
#include <cctype>
#include <list>

#include "tokenizer/tokenizer_impl.h"

namespace sf::tok {

void SpecialTokenTrie::insert(std::string_view text, int32_t id) {
  if (text.empty()) return;
  int32_t node = 0;
  for (char c : text) {
    const uint8_t b = static_cast<uint8_t>(c);
    int32_t next = child(node, b);
    if (next < 0) {
      next = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
      auto& kids = nodes_[static_cast<size_t>(node)].children;
      kids.insert(std::lower_bound(kids.begin(), kids.end(), std::make_pair(b, int32_t{-1})), {b, next});
    }
    node = next;
  }
  nodes_[static_cast<size_t>(node)].id = id;
  root_[static_cast<uint8_t>(text[0])] = child(0, static_cast<uint8_t>(text[0]));
}

int32_t SpecialTokenTrie::child(int32_t node, uint8_t byte) const {
  const auto& kids = nodes_[static_cast<size_t>(node)].children;
  auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(byte, int32_t{-1}));
  return (it != kids.end() && it->first == byte) ? it->second : -1;
}

std::vector<Fragment> split_special_tokens(const TokenizerImpl& impl, std::string_view text, bool parse_special) {
  std::list<Fragment> fragments;
  if (text.empty()) return {};
  fragments.push_back({kNoToken, text});

  std::vector<int32_t> present;
  impl.special_trie.for_each_occurrence(text, [&](int32_t id) { present.push_back(id); });
  if (present.empty()) return {fragments.begin(), fragments.end()};
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());

  for (const int32_t id : impl.special_tokens) {
    if (!std::binary_search(present.begin(), present.end(), id)) continue;
    const uint32_t attr = impl.attr(id);
    if (!parse_special && (attr & (kAttrControl | kAttrUnknown))) continue;
    const std::string& special = impl.spec.tokens[static_cast<size_t>(id)].text;

    for (auto it = fragments.begin(); it != fragments.end(); ++it) {
      if (it->token != kNoToken) continue;
      std::string_view rest = it->text;
      const auto insert_at = it;
      bool split = false;
      while (true) {
        const size_t match = rest.find(special);
        if (match == std::string_view::npos) break;
        split = true;
        std::string_view left = rest.substr(0, match);
        if (attr & kAttrLstrip) {
          while (!left.empty() && std::isspace(static_cast<unsigned char>(left.back()))) {
            left.remove_suffix(1);
          }
        }
        if (!left.empty()) fragments.insert(insert_at, {kNoToken, left});
        fragments.insert(insert_at, {id, {}});
        rest = rest.substr(match + special.size());
        if (attr & kAttrRstrip) {
          while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) {
            rest.remove_prefix(1);
          }
        }
      }
      if (!split) continue;
      // The fragment itself is replaced by its pieces: the right remainder takes its place.
      if (rest.empty()) {
        it = fragments.erase(it);
        --it;
      } else {
        it->text = rest;
      }
    }
  }
  return {fragments.begin(), fragments.end()};
}

}  // namespace sf::tok
