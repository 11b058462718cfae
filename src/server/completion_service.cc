#include "server/completion_service.h"

#include <random>

#include "server/stop_filter.h"

namespace sf::server {

CompletionService::CompletionService(Session& session, SlotPool& pool, ServerMetrics& metrics, ServiceConfig config)
    : session_(session), pool_(pool), metrics_(metrics), config_(std::move(config)) {}

std::variant<std::unique_ptr<CompletionJob>, ApiError> CompletionService::admit(Endpoint endpoint,
                                                                                std::string_view body) {
  auto parsed = parse_completion_request(body, endpoint);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  std::unique_ptr<CompletionJob> job(new CompletionJob());
  job->pool_ = &pool_;
  job->metrics_ = &metrics_;
  job->request_ = std::move(std::get<CompletionRequest>(parsed));
  CompletionRequest& r = job->request_;

  if (!r.model.empty() && r.model != config_.model_id)
    return ApiError::not_found("the model '" + r.model + "' does not exist; this server serves '" + config_.model_id +
                                   "' (see GET /v1/models)",
                               "model", "model_not_found");

  std::string text = r.prompt;
  if (endpoint == Endpoint::kChat) {
    if (!config_.chat_template)
      return ApiError::bad_request(config_.chat_template_error, "messages", "chat_template_missing");
    auto rendered = config_.chat_template->render(r.messages, /*add_generation_prompt=*/true);
    if (!rendered.ok()) return ApiError::bad_request(rendered.status().message(), "messages");
    text = std::move(rendered).value();
    // Some models write the end-of-turn marker as plain text instead of an end token.
    job->stops_.push_back(config_.chat_template->end_of_turn());
  }
  job->stops_.insert(job->stops_.end(), r.stop.begin(), r.stop.end());

  // Special-token text is recognised in the prompt, as `specflash run` does by default
  // (the chat template's markers need it).
  auto tokens = session_.tokenize(text, /*parse_special=*/true);
  if (!tokens.ok())
    return ApiError::bad_request(tokens.status().message(), endpoint == Endpoint::kChat ? "messages" : "prompt");
  job->prompt_ = std::move(tokens).value();
  if (job->prompt_.empty())
    return ApiError::bad_request("the prompt is empty", endpoint == Endpoint::kChat ? "messages" : "prompt");
  const int n_ctx = session_.n_ctx();
  const int n_prompt = static_cast<int>(job->prompt_.size());
  if (n_prompt >= n_ctx)
    return ApiError::bad_request("this model's maximum context length is " + std::to_string(n_ctx) +
                                     " tokens, but the prompt has " + std::to_string(n_prompt) +
                                     " tokens (and at least one must be generated)",
                                 endpoint == Endpoint::kChat ? "messages" : "prompt", "context_length_exceeded");
  // Without max_tokens a chat reply may use the rest of the context; a longer max_tokens
  // is cut at the context end (finish_reason "length").
  const int room = n_ctx - n_prompt;
  int wanted = r.max_tokens.value_or(endpoint == Endpoint::kChat ? room : config_.default_completion_max_tokens);
  job->n_predict_ = std::min(wanted, room);

  auto spec = session_.resolve_spec(r.spec);
  if (!spec.ok()) return ApiError::bad_request(spec.status().message(), "specflash");
  job->speculative_ = spec->enabled();
  if (!r.seed_given) r.sampling.seed = std::random_device{}();

  job->identity_ = make_identity(endpoint, config_.model_id);
  ApiError busy;
  job->lease_ = pool_.acquire(job->prompt_, &busy);
  if (!job->lease_) return busy;
  return job;
}

Result<CompletionOutcome> CompletionJob::run(const std::function<bool(const std::string&)>& emit, bool* cancelled) {
  *cancelled = false;
  StopFilter filter(stops_);
  CompletionOutcome outcome;
  outcome.slot = lease_->slot();
  outcome.speculative = speculative_;
  auto send = [&](const std::string& piece) {
    if (piece.empty() || *cancelled) return;
    outcome.text += piece;
    if (!emit(piece)) *cancelled = true;
  };
  auto result = pool_->generate(*lease_, prompt_, n_predict_, request_.sampling, request_.spec,
                                [&](int32_t, const std::string& text) {
                                  send(filter.push(text));
                                  return !*cancelled && !filter.stopped();
                                });
  // The slot is free as soon as the engine is done, before the last bytes go out.
  lease_.reset();
  if (!result.ok()) return result.status();
  send(filter.flush());
  outcome.stats = *result;
  metrics_->record_generation(outcome.stats, speculative_);
  if (*cancelled) metrics_->record_disconnect();
  outcome.finish_reason = !filter.stopped() && outcome.stats.generated_tokens >= n_predict_ ? "length" : "stop";
  return outcome;
}

}  // namespace sf::server
