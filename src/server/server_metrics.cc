#include "server/server_metrics.h"

#include <cstdio>

namespace sf::server {

void ServerMetrics::record_generation(const GenerationStats& stats, bool speculative) {
  prompt_tokens_.fetch_add(static_cast<uint64_t>(stats.prompt_tokens));
  reused_prompt_tokens_.fetch_add(static_cast<uint64_t>(stats.reused_prompt_tokens));
  generated_tokens_.fetch_add(static_cast<uint64_t>(stats.generated_tokens));
  if (speculative) {
    spec_cycles_.fetch_add(stats.spec.cycles);
    draft_tokens_.fetch_add(stats.spec.draft_tokens);
    accepted_draft_tokens_.fetch_add(stats.spec.accepted_draft_tokens);
  }
  last_decode_tps_milli_.store(static_cast<uint64_t>(stats.decode_tokens_per_s() * 1000.0));
}

void ServerMetrics::record_response(int http_status) {
  if (http_status < 400) {
    requests_ok_.fetch_add(1);
  } else if (http_status < 500) {
    requests_client_error_.fetch_add(1);
  } else {
    requests_server_error_.fetch_add(1);
  }
}

std::string ServerMetrics::render_prometheus(const EngineGauges& g) const {
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help, double value, const char* labels = "") {
    char line[512];
    std::snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n%s%s %.17g\n", name, help, name, type, name, labels,
                  value);
    out += line;
  };
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  const uint64_t generated = generated_tokens_.load();
  const uint64_t cycles = spec_cycles_.load(), accepted = accepted_draft_tokens_.load();

  out += "# HELP specflash_requests_total Completion requests answered, by HTTP status class.\n";
  out += "# TYPE specflash_requests_total counter\n";
  out += "specflash_requests_total{status=\"2xx\"} " + std::to_string(requests_ok_.load()) + "\n";
  out += "specflash_requests_total{status=\"4xx\"} " + std::to_string(requests_client_error_.load()) + "\n";
  out += "specflash_requests_total{status=\"5xx\"} " + std::to_string(requests_server_error_.load()) + "\n";
  metric("specflash_client_disconnects_total", "counter", "Streams whose client went away before the end.",
         d(disconnects_.load()));
  metric("specflash_prompt_tokens_total", "counter", "Prompt tokens of all generations.", d(prompt_tokens_.load()));
  metric("specflash_prompt_tokens_reused_total", "counter", "Prompt tokens served from a slot's prefix cache.",
         d(reused_prompt_tokens_.load()));
  metric("specflash_generated_tokens_total", "counter", "Tokens generated.", d(generated));
  metric("specflash_tokens_per_second", "gauge",
         "Aggregate generation rate: generated tokens over the wall time with at least one busy slot.",
         g.busy_seconds > 0 ? d(generated) / g.busy_seconds : 0.0);
  metric("specflash_last_decode_tokens_per_second", "gauge", "Decode rate of the last finished generation.",
         d(last_decode_tps_milli_.load()) / 1000.0);
  metric("specflash_spec_cycles_total", "counter", "Speculative draft-verify cycles (target passes).", d(cycles));
  metric("specflash_spec_draft_tokens_total", "counter", "Draft tokens proposed.", d(draft_tokens_.load()));
  metric("specflash_spec_accepted_tokens_total", "counter", "Draft tokens accepted by verification.", d(accepted));
  metric("specflash_spec_accepted_length", "gauge",
         "Mean tokens committed per speculative target pass (accepted drafts + the bonus token).",
         cycles > 0 ? d(accepted + cycles) / d(cycles) : 0.0);
  metric("specflash_weight_bytes_streamed_total", "counter", "Weight bytes read from storage by the layer streamer.",
         d(g.weight_bytes_streamed));
  metric("specflash_response_bytes_total", "counter", "Response body bytes sent (JSON and server-sent events).",
         d(bytes_sent_.load()));
  metric("specflash_queue_depth", "gauge", "Requests waiting for a slot.", g.queue_depth);
  metric("specflash_requests_queued_total", "counter", "Requests that waited in the queue for a slot.",
         d(g.queued_total));
  metric("specflash_slots_busy", "gauge", "Slots serving a request.", g.busy_slots);
  metric("specflash_slots", "gauge", "Slots (sequences with their own KV cache).", g.n_slots);
  metric("specflash_peak_rss_bytes", "gauge", "Peak resident set size of the process (VmHWM).", d(g.peak_rss_bytes));
  metric("specflash_memory_budget_bytes", "gauge", "The memory budget (0: unlimited).", d(g.memory_budget_bytes));
  metric("specflash_memory_footprint_bytes", "gauge",
         "Planned engine footprint: weights, buffers, every slot's KV cache, scratch.", d(g.memory_footprint_bytes));
  return out;
}

}  // namespace sf::server
