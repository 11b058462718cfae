// WordCache: within one encode call, reuses the ids of words already encoded. Natural text
// repeats words so much that this is the main speed-up on long inputs (both the SPM and
// the BPE encoders use it). Keys are views into the caller's text, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sf::tok {

class WordCache {
 public:
  // Texts shorter than this are not worth caching; longer words are rarely repeated.
  static constexpr size_t kMinText = 2048;
  static constexpr size_t kMaxWord = 64;

  explicit WordCache(size_t text_size) : enabled_(text_size >= kMinText) {}

  // Appends the ids of `word` to out, from the cache or by encoder.encode(word, out).
  template <class Encoder>
  void encode(std::string_view word, Encoder& encoder, std::vector<int32_t>& out) {
    if (!enabled_ || word.size() > kMaxWord) {
      encoder.encode(word, out);
      return;
    }
    auto [it, fresh] = cache_.try_emplace(word);
    if (!fresh) {
      const auto [begin, end] = it->second;
      for (uint32_t i = begin; i < end; ++i) out.push_back(out[i]);
      return;
    }
    const auto begin = static_cast<uint32_t>(out.size());
    encoder.encode(word, out);
    it->second = {begin, static_cast<uint32_t>(out.size())};
  }

 private:
  bool enabled_;
  std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> cache_;  // -> ids [begin, end) of out
};

}  // namespace sf::tok
