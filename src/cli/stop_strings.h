// Stop strings for streamed text (llama.cpp's -r/--reverse-prompt, a chat template's
// end-of-turn text): text is released to the caller only once it cannot be the start of a
// stop string, so a stop string is never half-printed. Not thread-safe.
#pragma once

#include <string>
#include <vector>

namespace sf::cli {

class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);

  // Appends generated text; returns the text that is now safe to print. After a stop string
  // appears, stopped() is true and nothing from the stop string on is ever returned.
  std::string push(const std::string& text);
  // The held-back tail at the end of generation (empty after a stop).
  std::string flush();
  bool stopped() const { return stopped_; }
  // Everything released so far plus the held-back tail: the reply without its stop string.
  const std::string& text() const { return text_; }

 private:
  std::vector<std::string> stops_;
  std::string text_;     // all accepted text (cut at the stop string once stopped)
  size_t released_ = 0;  // bytes of text_ already returned
  bool stopped_ = false;
};

}  // namespace sf::cli
