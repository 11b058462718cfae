#include "cli/stop_strings.h"

#include <algorithm>

namespace sf::cli {

StopStrings::StopStrings(std::vector<std::string> stops) {
  for (auto& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

std::string StopStrings::push(const std::string& text) {
  if (stopped_) return {};
  // A stop string may straddle earlier text: search from where it could begin.
  size_t longest = 0;
  for (const auto& s : stops_) longest = std::max(longest, s.size());
  const size_t search_from = text_.size() > longest ? text_.size() - longest : 0;
  text_ += text;
  size_t stop_at = std::string::npos;
  for (const auto& s : stops_) stop_at = std::min(stop_at, text_.find(s, search_from));
  if (stop_at != std::string::npos) {
    stopped_ = true;
    text_.resize(stop_at);
  }
  size_t safe = text_.size();
  if (!stopped_) {
    // Hold back the longest tail that is a proper prefix of some stop string.
    for (const auto& s : stops_)
      for (size_t n = std::min(s.size() - 1, text_.size()); n > 0; --n)
        if (text_.compare(text_.size() - n, n, s, 0, n) == 0) {
          safe = std::min(safe, text_.size() - n);
          break;
        }
  }
  std::string out;
  if (safe > released_) {
    out = text_.substr(released_, safe - released_);
    released_ = safe;
  }
  return out;
}

std::string StopStrings::flush() {
  std::string out = text_.substr(std::min(released_, text_.size()));
  released_ = text_.size();
  return out;
}

}  // namespace sf::cli
