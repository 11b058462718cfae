#include "spec/prompt_lookup.h"

#include <algorithm>

namespace sf {

std::vector<int32_t> prompt_lookup(const std::vector<int32_t>& text, int max_ngram, int max_tokens) {
  const int64_t n = static_cast<int64_t>(text.size());
  for (int64_t g = std::min<int64_t>(max_ngram, n - 1); g >= 1; --g) {
    const auto suffix = text.end() - g;
    // Every occurrence other than the suffix itself (start < n - g) has a token after it.
    for (int64_t start = 0; start + g < n; ++start) {
      if (!std::equal(suffix, text.end(), text.begin() + start)) continue;
      const int64_t from = start + g;
      return {text.begin() + from, text.begin() + std::min<int64_t>(n, from + max_tokens)};
    }
  }
  return {};
}

}  // namespace sf
