// CompletionRequest: the body of POST /v1/chat/completions or /v1/completions, parsed and
// validated into one config struct before anything touches the engine.
//
// Fields: model, messages (chat) / prompt (completions), max_tokens (or
// max_completion_tokens), temperature, top_p, top_k, min_p, seed, stop (a string or an
// array of strings), stream, stream_options.include_usage, n (only 1), and the extension
// object "specflash": {"method": "none"|"chain"|"tree", "draft_len": N}. Unknown fields are
// ignored, as OpenAI-compatible servers do; null counts as absent; a known field of the
// wrong type or out of range is a 400 that names the field. Defaults follow the OpenAI API
// (temperature 1, top_p 1, no top-k/min-p), not the CLI's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/session.h"
#include "sampling/sampler.h"
#include "server/api_error.h"
#include "tokenizer/chat_template.h"

namespace sf::server {

enum class Endpoint { kChat, kCompletion };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kCompletion;
  std::string model;                  // "" when absent (any name is then accepted)
  std::vector<ChatMessage> messages;  // chat
  std::string prompt;                 // completions
  std::optional<int> max_tokens;      // absent: until the context or an end token
  SamplingParams sampling;
  bool seed_given = false;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a final chunk with usage
  SpecOverride spec;           // from the "specflash" extension object
};

// Parses and validates a request body; the error names the offending field.
std::variant<CompletionRequest, ApiError> parse_completion_request(std::string_view body, Endpoint endpoint);

}  // namespace sf::server
