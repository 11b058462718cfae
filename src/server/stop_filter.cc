#include "server/stop_filter.h"

#include <algorithm>

namespace sf::server {

StopFilter::StopFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
}

std::string StopFilter::push(std::string_view text) {
  if (stopped_) return {};
  pending_.append(text);
  // Everything before pending_ was released only when no stop string could start there,
  // so a match can only begin inside pending_.
  size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, pending_.find(s));
  if (first != std::string::npos) {
    std::string out = pending_.substr(0, first);
    pending_.clear();
    stopped_ = true;
    return out;
  }
  // Hold from the first position whose suffix is a proper prefix of some stop string.
  size_t hold = pending_.size();
  for (size_t i = 0; i < pending_.size() && hold == pending_.size(); ++i) {
    const size_t tail = pending_.size() - i;
    for (const std::string& s : stops_) {
      if (tail < s.size() && s.compare(0, tail, pending_, i, tail) == 0) {
        hold = i;
        break;
      }
    }
  }
  std::string out = pending_.substr(0, hold);
  pending_.erase(0, hold);
  return out;
}

std::string StopFilter::flush() {
  std::string out;
  if (!stopped_) out.swap(pending_);
  pending_.clear();
  return out;
}

}  // namespace sf::server
