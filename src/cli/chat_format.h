// How `specflash chat` turns a conversation into a prompt: the model's chat template, or a
// plain transcript for models that have none (the embedded default stories260K is a story
// model without a template), so `specflash chat` works with no arguments.
//
// The transcript format (documented in the README): an optional system message on its own
// line, then one "User: ..." and "Assistant: ..." line per message; the prompt ends with
// "Assistant:" and a reply stops at a new "User:" line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tokenizer/chat_template.h"

namespace sf::cli {

class ChatFormat {
 public:
  // `name` "transcript" picks the fallback; another name a template by name; empty: the
  // model's template when it has one, else the fallback (with *used_fallback set).
  static Result<ChatFormat> for_tokenizer(const Tokenizer& tokenizer, const std::string& name, bool* used_fallback);

  Result<std::string> render(const std::vector<ChatMessage>& messages) const;  // with the generation prompt
  std::string end_of_turn() const;
  std::string name() const;

 private:
  std::optional<ChatTemplate> template_;  // empty: the transcript fallback
};

}  // namespace sf::cli
