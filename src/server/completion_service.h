// CompletionService: turns a completion request into a generation, independent of HTTP.
//
// admit() does everything that can fail with a client error before a response starts:
// parsing and validation, the model name, the chat template, tokenization, the context
// limit, the speculation knobs, and finally waiting for a slot (503 when none can be had).
// The CompletionJob it returns owns its slot; run() generates, passing each piece of text
// that is safe to send (complete UTF-8, no part of a stop string) to `emit`, and stops
// early when emit returns false (the client went away), which frees the slot at once.
//
// Thread-safety: admit() and different jobs' run() may be called from any threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/session.h"
#include "server/api_error.h"
#include "server/completion_request.h"
#include "server/response_format.h"
#include "server/server_metrics.h"
#include "server/slot_pool.h"
#include "tokenizer/chat_template.h"

namespace sf::server {

struct ServiceConfig {
  std::string model_id;                       // the name /v1/models lists and requests must use
  std::optional<ChatTemplate> chat_template;  // absent: chat completions are refused
  std::string chat_template_error;            // why it is absent
  int default_completion_max_tokens = 16;     // /v1/completions without max_tokens (OpenAI's default)
};

class CompletionJob {
 public:
  const CompletionRequest& request() const { return request_; }
  const ResponseIdentity& identity() const { return identity_; }
  // Runs the generation; *cancelled is set when emit returned false.
  Result<CompletionOutcome> run(const std::function<bool(const std::string&)>& emit, bool* cancelled);

 private:
  friend class CompletionService;
  CompletionJob() = default;
  SlotPool* pool_ = nullptr;
  ServerMetrics* metrics_ = nullptr;
  CompletionRequest request_;
  ResponseIdentity identity_;
  std::vector<int32_t> prompt_;
  int n_predict_ = 0;
  bool speculative_ = false;
  std::vector<std::string> stops_;
  std::unique_ptr<SlotPool::Lease> lease_;
};

class CompletionService {
 public:
  CompletionService(Session& session, SlotPool& pool, ServerMetrics& metrics, ServiceConfig config);

  const ServiceConfig& config() const { return config_; }
  std::variant<std::unique_ptr<CompletionJob>, ApiError> admit(Endpoint endpoint, std::string_view body);

 private:
  Session& session_;
  SlotPool& pool_;
  ServerMetrics& metrics_;
  ServiceConfig config_;
};

}  // namespace sf::server
