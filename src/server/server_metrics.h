// ServerMetrics: counters of what the server did, rendered as Prometheus text for
// GET /metrics. Counters are atomics bumped by request threads; gauges that belong to
// other components (queue depth, busy slots, bytes streamed from flash) are passed in
// at render time.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "engine/session.h"

namespace sf::server {

struct EngineGauges {
  int queue_depth = 0;
  uint64_t queued_total = 0;  // requests that waited for a slot
  int busy_slots = 0;
  int n_slots = 0;
  double busy_seconds = 0;             // wall time with at least one slot busy
  uint64_t weight_bytes_streamed = 0;  // read from storage by the layer streamer
  uint64_t peak_rss_bytes = 0;
  uint64_t memory_budget_bytes = 0;  // 0: unlimited
  uint64_t memory_footprint_bytes = 0;
};

class ServerMetrics {
 public:
  // One finished generation (whatever its outcome).
  void record_generation(const GenerationStats& stats, bool speculative);
  void record_response(int http_status);
  void record_disconnect() { disconnects_.fetch_add(1); }
  void add_bytes_sent(uint64_t n) { bytes_sent_.fetch_add(n); }

  std::string render_prometheus(const EngineGauges& gauges) const;

 private:
  std::atomic<uint64_t> requests_ok_{0}, requests_client_error_{0}, requests_server_error_{0};
  std::atomic<uint64_t> disconnects_{0};
  std::atomic<uint64_t> prompt_tokens_{0}, reused_prompt_tokens_{0}, generated_tokens_{0};
  std::atomic<uint64_t> spec_cycles_{0}, draft_tokens_{0}, accepted_draft_tokens_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<uint64_t> last_decode_tps_milli_{0};  // last generation's decode tokens/s x 1000
};

}  // namespace sf::server
