#include "cli/chat_context.h"

namespace sf::cli {

Result<FittedConversation> fit_conversation(
    std::vector<ChatMessage>& messages,
    const std::function<Result<std::vector<int32_t>>(const std::vector<ChatMessage>&)>& to_tokens, int n_ctx,
    int reserve) {
  FittedConversation fitted;
  while (true) {
    SF_ASSIGN_OR_RETURN(fitted.tokens, to_tokens(messages));
    const int n = static_cast<int>(fitted.tokens.size());
    if (n + reserve <= n_ctx) return fitted;
    // The first message that may go: anything but a leading system message and the last one.
    size_t first = !messages.empty() && messages[0].role == "system" ? 1 : 0;
    if (first + 1 >= messages.size()) {
      if (n < n_ctx) return fitted;  // no room for a full reply, but some: let it run short
      return Status::Errorf(
          "the message is %d tokens with the system message, more than the context of %d; shorten it or raise "
          "--ctx-size",
          n, n_ctx);
    }
    messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(first));
    ++fitted.dropped_messages;
    if (first + 1 < messages.size() && messages[first].role == "assistant") {
      messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(first));
      ++fitted.dropped_messages;
    }
  }
}

}  // namespace sf::cli
