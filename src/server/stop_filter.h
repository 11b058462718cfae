// StopFilter: cuts generated text at the first stop string without ever letting a client
// see part of a stop string.
//
// Text arrives in pieces (complete UTF-8 from the StreamingDecoder). push() returns the
// text that is safe to send: it holds back the shortest tail that could still grow into a
// stop string, and when a stop string completes it returns the text before it and stops.
// Because a held tail always starts where a stop string starts (at a character
// boundary), what it releases is never a partial UTF-8 character either.
// Not thread-safe (one per request).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sf::server {

class StopFilter {
 public:
  explicit StopFilter(std::vector<std::string> stops);

  // Text that became safe to send with this piece (possibly "").
  std::string push(std::string_view text);
  // At the end of generation: the held-back tail (it did not become a stop string).
  std::string flush();
  // A stop string was found; everything after it is dropped.
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;  // received, not yet released
  bool stopped_ = false;
};

}  // namespace sf::server
