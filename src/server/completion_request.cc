#include "server/completion_request.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace sf::server {

namespace {

using nlohmann::json;

constexpr size_t kMaxStopStrings = 16;
constexpr int kMaxDraftLen = 64;

// A field of the wrong type or out of range. Returned through std::optional so that each
// check reads as one line at the call site.
ApiError field_error(const std::string& name, const std::string& what) {
  return ApiError::bad_request("'" + name + "' " + what, name, "invalid_type");
}

const json* field(const json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<ApiError> read_number(const json& object, const char* name, double lo, double hi, double* out) {
  const json* v = field(object, name);
  if (!v) return std::nullopt;
  if (!v->is_number()) return field_error(name, "must be a number");
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "must be between %g and %g", lo, hi);
    return field_error(name, buf);
  }
  *out = x;
  return std::nullopt;
}

// Integers may arrive as 5 or 5.0 (JavaScript has one number type); 5.5 is an error.
std::optional<ApiError> read_integer(const json& object, const char* name, int64_t lo, int64_t hi, int64_t* out) {
  const json* v = field(object, name);
  if (!v) return std::nullopt;
  if (!v->is_number()) return field_error(name, "must be an integer");
  int64_t x = 0;
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e15) return field_error(name, "must be an integer");
    x = static_cast<int64_t>(d);
  } else if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    x = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                       : static_cast<int64_t>(u);
  } else {
    x = v->get<int64_t>();
  }
  if (x < lo || x > hi)
    return field_error(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  *out = x;
  return std::nullopt;
}

std::optional<ApiError> read_bool(const json& object, const char* name, bool* out) {
  const json* v = field(object, name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) return field_error(name, "must be a boolean");
  *out = v->get<bool>();
  return std::nullopt;
}

// Message content: a string, or an array of {"type": "text", "text": "..."} parts (the
// newer OpenAI shape) whose texts are joined.
std::optional<ApiError> read_content(const json& message, const std::string& name, std::string* out) {
  const json* c = field(message, "content");
  if (!c) return field_error(name + ".content", "is required");
  if (c->is_string()) {
    *out = c->get<std::string>();
    return std::nullopt;
  }
  if (!c->is_array()) return field_error(name + ".content", "must be a string or an array of text parts");
  out->clear();
  for (const json& part : *c) {
    const json* type = part.is_object() ? field(part, "type") : nullptr;
    const json* text = part.is_object() ? field(part, "text") : nullptr;
    if (!type || !type->is_string() || type->get<std::string>() != "text" || !text || !text->is_string())
      return field_error(name + ".content",
                         "parts must be {\"type\": \"text\", \"text\": string} (only text is supported)");
    *out += text->get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> read_messages(const json& body, std::vector<ChatMessage>* out) {
  const json* m = field(body, "messages");
  if (!m) return ApiError::bad_request("'messages' is required", "messages", "missing_required_parameter");
  if (!m->is_array()) return field_error("messages", "must be an array of messages");
  if (m->empty()) return ApiError::bad_request("'messages' must not be empty", "messages");
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    const std::string name = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) return field_error(name, "must be an object");
    const json* role = field(msg, "role");
    if (!role || !role->is_string()) return field_error(name + ".role", "must be a string");
    ChatMessage cm;
    cm.role = role->get<std::string>();
    // OpenAI's newer "developer" role is the system role under another name.
    if (cm.role == "developer") cm.role = "system";
    if (cm.role != "system" && cm.role != "user" && cm.role != "assistant")
      return ApiError::bad_request(name + ".role '" + cm.role + "' is not one of system, developer, user, assistant",
                                   name + ".role");
    if (auto e = read_content(msg, name, &cm.content)) return e;
    out->push_back(std::move(cm));
  }
  return std::nullopt;
}

std::optional<ApiError> read_prompt(const json& body, std::string* out) {
  const json* p = field(body, "prompt");
  if (!p) return ApiError::bad_request("'prompt' is required", "prompt", "missing_required_parameter");
  if (p->is_string()) {
    *out = p->get<std::string>();
    return std::nullopt;
  }
  // A batch of prompts or token-id prompts would need several choices; one string in an
  // array is the same as the string.
  if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    *out = (*p)[0].get<std::string>();
    return std::nullopt;
  }
  return field_error("prompt", "must be a string (or an array holding one string)");
}

std::optional<ApiError> read_stop(const json& body, std::vector<std::string>* out) {
  const json* s = field(body, "stop");
  if (!s) return std::nullopt;
  if (s->is_string()) {
    if (s->get<std::string>().empty()) return field_error("stop", "must not be an empty string");
    out->push_back(s->get<std::string>());
    return std::nullopt;
  }
  if (!s->is_array()) return field_error("stop", "must be a string or an array of strings");
  if (s->size() > kMaxStopStrings)
    return field_error("stop", "may hold at most " + std::to_string(kMaxStopStrings) + " strings");
  for (const json& item : *s) {
    if (!item.is_string() || item.get<std::string>().empty())
      return field_error("stop", "must be a string or an array of non-empty strings");
    out->push_back(item.get<std::string>());
  }
  return std::nullopt;
}

std::optional<ApiError> read_extension(const json& body, SpecOverride* out) {
  const json* ext = field(body, "specflash");
  if (!ext) return std::nullopt;
  if (!ext->is_object()) return field_error("specflash", "must be an object");
  if (const json* m = field(*ext, "method")) {
    if (!m->is_string()) return field_error("specflash.method", "must be one of none, chain, tree");
    const std::string method = m->get<std::string>();
    if (method == "none") {
      out->disable = true;
    } else if (method == "chain") {
      out->method = SpecConfig::Method::kChain;
    } else if (method == "tree") {
      out->method = SpecConfig::Method::kTree;
    } else {
      return field_error("specflash.method", "must be one of none, chain, tree");
    }
  }
  int64_t draft_len = 0;
  if (auto e = read_integer(*ext, "draft_len", 1, kMaxDraftLen, &draft_len)) {
    e->param = "specflash.draft_len";
    e->message = "'specflash." + e->message.substr(1);
    return e;
  }
  out->draft_len = static_cast<int>(draft_len);
  return std::nullopt;
}

}  // namespace

std::variant<CompletionRequest, ApiError> parse_completion_request(std::string_view body, Endpoint endpoint) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return ApiError::bad_request("the request body is not valid JSON", "", "invalid_json");
  if (!j.is_object()) return ApiError::bad_request("the request body must be a JSON object", "", "invalid_json");

  CompletionRequest r;
  r.endpoint = endpoint;
  // The OpenAI defaults: plain sampling from the full distribution.
  r.sampling.temperature = 1.0f;
  r.sampling.top_p = 1.0f;
  r.sampling.top_k = 0;
  r.sampling.min_p = 0.0f;

  if (const json* m = field(j, "model")) {
    if (!m->is_string()) return field_error("model", "must be a string");
    r.model = m->get<std::string>();
  }
  if (endpoint == Endpoint::kChat) {
    if (auto e = read_messages(j, &r.messages)) return *e;
  } else {
    if (auto e = read_prompt(j, &r.prompt)) return *e;
  }
  int64_t max_tokens = -1;
  if (auto e = read_integer(j, "max_completion_tokens", 1, 1 << 24, &max_tokens)) return *e;
  if (auto e = read_integer(j, "max_tokens", 1, 1 << 24, &max_tokens)) return *e;
  if (max_tokens > 0) r.max_tokens = static_cast<int>(max_tokens);

  double x = r.sampling.temperature;
  if (auto e = read_number(j, "temperature", 0, 2, &x)) return *e;
  r.sampling.temperature = static_cast<float>(x);
  x = r.sampling.top_p;
  if (auto e = read_number(j, "top_p", 0, 1, &x)) return *e;
  r.sampling.top_p = static_cast<float>(x);
  x = r.sampling.min_p;
  if (auto e = read_number(j, "min_p", 0, 1, &x)) return *e;
  r.sampling.min_p = static_cast<float>(x);
  int64_t i = r.sampling.top_k;
  if (auto e = read_integer(j, "top_k", 0, 1 << 24, &i)) return *e;
  r.sampling.top_k = static_cast<int>(i);
  int64_t seed = 0;
  if (field(j, "seed")) {
    if (auto e =
            read_integer(j, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &seed))
      return *e;
    r.sampling.seed = static_cast<uint64_t>(seed);
    r.seed_given = true;
  }
  int64_t n = 1;
  if (auto e = read_integer(j, "n", 1, 1 << 20, &n)) return *e;
  if (n != 1) return ApiError::bad_request("'n' must be 1 (one choice per request)", "n");

  if (auto e = read_stop(j, &r.stop)) return *e;
  if (auto e = read_bool(j, "stream", &r.stream)) return *e;
  if (const json* so = field(j, "stream_options")) {
    if (!so->is_object()) return field_error("stream_options", "must be an object");
    if (auto e = read_bool(*so, "include_usage", &r.include_usage)) {
      e->param = "stream_options.include_usage";
      return *e;
    }
  }
  if (auto e = read_extension(j, &r.spec)) return *e;
  return r;
}

}  // namespace sf::server
