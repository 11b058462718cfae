// Keeping a long chat inside the context window: instead of failing every later turn once
// the conversation outgrows --ctx-size, the oldest turns are dropped (the system message
// stays) until the prompt plus room for a reply fits. The dropped turns are gone for the
// model; the caller says so on stderr.
#pragma once

#include <functional>
#include <vector>

#include "base/status.h"
#include "tokenizer/chat_template.h"

namespace sf::cli {

struct FittedConversation {
  std::vector<int32_t> tokens;  // the prompt to generate from
  int dropped_messages = 0;     // removed from the front of the conversation
};

// Renders and tokenizes `messages` with `to_tokens`; while the result leaves fewer than
// `reserve` tokens of the n_ctx context free, removes the oldest non-system message (and
// an assistant message left at the front, so the conversation starts with a user turn).
// Error when even the system message and the last message do not fit.
Result<FittedConversation> fit_conversation(
    std::vector<ChatMessage>& messages,
    const std::function<Result<std::vector<int32_t>>(const std::vector<ChatMessage>&)>& to_tokens, int n_ctx,
    int reserve);

}  // namespace sf::cli
