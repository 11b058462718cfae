// The OpenAI wire format of completion answers: whole JSON responses (chat.completion,
// text_completion) and the server-sent-event chunks of a stream
// (chat.completion.chunk / text_completion chunks, then "data: [DONE]").
//
// Besides the standard fields, the final chunk and the whole response carry an extension
// object "specflash" with what the engine did for the request (slot, reused prompt
// tokens, speculative cycles, drafted and accepted tokens), so clients and tests can see
// that speculation really ran.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/session.h"
#include "server/completion_request.h"

namespace sf::server {

struct ResponseIdentity {
  Endpoint endpoint = Endpoint::kCompletion;
  std::string id;  // "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;
  std::string model;
};

struct CompletionOutcome {
  std::string text;
  std::string finish_reason;  // "stop" or "length"
  GenerationStats stats;
  bool speculative = false;
  int slot = 0;
};

// A fresh identity for a request (ids are unique within the process).
ResponseIdentity make_identity(Endpoint endpoint, const std::string& model);

nlohmann::json usage_json(const GenerationStats& stats);
nlohmann::json extension_json(const CompletionOutcome& outcome);
// The non-streamed answer, with usage.
nlohmann::json full_response(const ResponseIdentity& id, const CompletionOutcome& outcome);
// One streamed chunk: `text` as the delta (chat) or text (completions); the chat's first
// chunk also carries the assistant role; finish_reason "" is null.
nlohmann::json stream_chunk(const ResponseIdentity& id, std::string_view text, bool first,
                            const std::string& finish_reason);
// The chunk stream_options.include_usage asks for: no choices, only usage.
nlohmann::json usage_chunk(const ResponseIdentity& id, const GenerationStats& stats);

// JSON text; invalid UTF-8 (never expected) is replaced rather than thrown on.
std::string dump_json(const nlohmann::json& j);
// "data: <json>\n\n"
std::string sse_event(const nlohmann::json& j);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace sf::server
