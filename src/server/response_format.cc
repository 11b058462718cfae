#include "server/response_format.h"

#include <atomic>
#include <chrono>
#include <cstdio>

namespace sf::server {

using nlohmann::json;

ResponseIdentity make_identity(Endpoint endpoint, const std::string& model) {
  static std::atomic<uint64_t> counter{0};
  ResponseIdentity id;
  id.endpoint = endpoint;
  id.created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s-%llx%06llx", endpoint == Endpoint::kChat ? "chatcmpl" : "cmpl",
                static_cast<unsigned long long>(id.created), static_cast<unsigned long long>(counter.fetch_add(1)));
  id.id = buf;
  id.model = model;
  return id;
}

json usage_json(const GenerationStats& s) {
  return {{"prompt_tokens", s.prompt_tokens},
          {"completion_tokens", s.generated_tokens},
          {"total_tokens", s.prompt_tokens + s.generated_tokens}};
}

json extension_json(const CompletionOutcome& o) {
  const GenerationStats& s = o.stats;
  return {{"slot", o.slot},
          {"speculative", o.speculative},
          {"reused_prompt_tokens", s.reused_prompt_tokens},
          {"target_passes", o.speculative ? s.spec.cycles : s.counters.forward_passes},
          {"draft_tokens", s.spec.draft_tokens},
          {"accepted_draft_tokens", s.spec.accepted_draft_tokens},
          {"mean_accepted", s.mean_accepted()},
          {"prefill_seconds", s.prefill_seconds},
          {"decode_seconds", s.decode_seconds},
          {"decode_tokens_per_s", s.decode_tokens_per_s()}};
}

namespace {
json base_object(const ResponseIdentity& id, const char* object) {
  return {{"id", id.id}, {"object", object}, {"created", id.created}, {"model", id.model}};
}
}  // namespace

json full_response(const ResponseIdentity& id, const CompletionOutcome& o) {
  json choice;
  json r;
  if (id.endpoint == Endpoint::kChat) {
    r = base_object(id, "chat.completion");
    choice = {{"index", 0},
              {"message", {{"role", "assistant"}, {"content", o.text}}},
              {"logprobs", nullptr},
              {"finish_reason", o.finish_reason}};
  } else {
    r = base_object(id, "text_completion");
    choice = {{"index", 0}, {"text", o.text}, {"logprobs", nullptr}, {"finish_reason", o.finish_reason}};
  }
  r["choices"] = json::array({choice});
  r["usage"] = usage_json(o.stats);
  r["specflash"] = extension_json(o);
  return r;
}

json stream_chunk(const ResponseIdentity& id, std::string_view text, bool first, const std::string& finish_reason) {
  json r;
  json choice;
  if (id.endpoint == Endpoint::kChat) {
    r = base_object(id, "chat.completion.chunk");
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || first) delta["content"] = std::string(text);
    choice = {{"index", 0}, {"delta", delta}, {"logprobs", nullptr}};
  } else {
    r = base_object(id, "text_completion");
    choice = {{"index", 0}, {"text", std::string(text)}, {"logprobs", nullptr}};
  }
  choice["finish_reason"] = finish_reason.empty() ? json(nullptr) : json(finish_reason);
  r["choices"] = json::array({choice});
  return r;
}

json usage_chunk(const ResponseIdentity& id, const GenerationStats& stats) {
  json r = base_object(id, id.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion");
  r["choices"] = json::array();
  r["usage"] = usage_json(stats);
  return r;
}

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse_event(const json& j) { return "data: " + dump_json(j) + "\n\n"; }

}  // namespace sf::server
