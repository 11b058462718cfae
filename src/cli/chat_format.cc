#include "cli/chat_format.h"

#include "tokenizer/tokenizer.h"

namespace sf::cli {

Result<ChatFormat> ChatFormat::for_tokenizer(const Tokenizer& tokenizer, const std::string& name, bool* used_fallback) {
  ChatFormat f;
  *used_fallback = false;
  if (name == "transcript") return f;
  if (name.empty() && tokenizer.spec().chat_template.empty()) {
    *used_fallback = true;
    return f;
  }
  SF_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::for_tokenizer(tokenizer, name));
  f.template_ = std::move(t);
  return f;
}

Result<std::string> ChatFormat::render(const std::vector<ChatMessage>& messages) const {
  if (template_) return template_->render(messages, /*add_generation_prompt=*/true);
  std::string text;
  for (const auto& m : messages) {
    if (m.role == "system") {
      text += m.content + "\n";
    } else if (m.role == "user") {
      text += "User: " + m.content + "\n";
    } else if (m.role == "assistant") {
      text += "Assistant: " + m.content + "\n";
    } else {
      return Status::Errorf("unknown chat role '%s'", m.role.c_str());
    }
  }
  return text + "Assistant:";
}

std::string ChatFormat::end_of_turn() const { return template_ ? template_->end_of_turn() : "\nUser:"; }

std::string ChatFormat::name() const { return template_ ? template_->name() : "transcript"; }

}  // namespace sf::cli
