// Aggregation of per-prompt results into the rows of the report. Rates are ratios of
// totals (total decode tokens / total decode time), not means of per-prompt rates, so a
// short prompt cannot weigh as much as a long one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "spec/cycle_stats.h"

namespace sf::bench {

struct SummaryRow {
  std::string method;
  std::string budget;    // label: "50%", or "resident" for ar
  std::string dataset;   // empty in the overall rows
  std::string category;  // empty in the overall rows
  int prompts = 0;
  uint64_t prompt_tokens = 0;
  uint64_t generated_tokens = 0;
  // Tokens from decode steps (GenerationStats::decode_tokens: plain decoding's first token
  // comes from the prefill, a speculative method's from its first cycle).
  uint64_t decode_tokens = 0;
  double decode_seconds = 0;
  double prefill_seconds = 0;
  uint64_t bytes_read = 0;    // prefill and decode
  double device_seconds = 0;  // the storage's own busy time for those bytes (emulated or not)
  // Decoding only: weight bytes the target's passes read wherever the weights live (CATS's
  // BPT numerator; a draft model's own reads are not in it) and bytes read from storage.
  uint64_t decode_weight_bytes = 0;
  uint64_t decode_stream_bytes = 0;
  uint64_t forward_passes = 0;
  uint64_t peak_rss_bytes = 0;      // max over the prompts
  SpecStats spec;                   // summed
  std::vector<PolicyUse> policies;  // cycles per policy that built the tree, summed
  int equal_to_ar = 0, compared_to_ar = 0;
  std::optional<double> speedup;       // over flash-ar at the same budget (and category)
  double decode_io_stall_seconds = 0;  // decoding only: the target's waits for streamed weights
  // With --repeat: every repetition's decode rate (the row itself is the median one), and
  // the index into BenchResult::runs of the run the row describes.
  std::vector<double> repetition_rates;
  size_t run_index = 0;

  double tokens_per_s() const { return decode_seconds > 0 ? decode_tokens / decode_seconds : 0; }
  // The decode time per decode token split into the draft's time, the target's waits for
  // streamed weights and the rest (the target's compute and the cycle's bookkeeping).
  double draft_ms_per_token() const { return per_token_ms(spec.draft_seconds); }
  double io_stall_ms_per_token() const { return per_token_ms(decode_io_stall_seconds); }
  double compute_ms_per_token() const {
    return per_token_ms(std::max(0.0, decode_seconds - spec.draft_seconds - decode_io_stall_seconds));
  }
  double prefill_tokens_per_s() const { return prefill_seconds > 0 ? prompt_tokens / prefill_seconds : 0; }
  // Tokens committed per target forward pass while decoding: 1 for plain decoding.
  double mean_accepted() const {
    return spec.cycles > 0 ? static_cast<double>(spec.accepted_draft_tokens + spec.cycles) / spec.cycles : 1.0;
  }
  double tree_nodes() const { return spec.cycles > 0 ? static_cast<double>(spec.draft_tokens) / spec.cycles : 0; }
  // Share of verification rows that ran the layers after the exit (pruning), or would
  // have (shadow pruning); nothing when no pruning decision was made.
  std::optional<double> rows_kept() const {
    if (spec.rows_verified == 0) return std::nullopt;
    if (spec.rows_pruned > 0 || method == "lever")
      return static_cast<double>(spec.rows_verified - spec.rows_pruned) / spec.rows_verified;
    if (spec.shadow_rows_kept > 0) return static_cast<double>(spec.shadow_rows_kept) / spec.rows_verified;
    return std::nullopt;
  }
  // Shadow pruning: accepted tokens the pruned trees would have kept, of those accepted.
  std::optional<double> retained() const {
    if (spec.shadow_rows_kept == 0 || spec.accepted_draft_tokens == 0) return std::nullopt;
    return static_cast<double>(spec.shadow_accepted) / spec.accepted_draft_tokens;
  }
  // CATS's bytes per token (eq. 3/4): weight bytes read per generated token while decoding.
  double decode_bpt() const {
    return generated_tokens > 0 ? static_cast<double>(decode_weight_bytes) / generated_tokens : 0;
  }
  double decode_stream_bytes_per_token() const {
    return generated_tokens > 0 ? static_cast<double>(decode_stream_bytes) / generated_tokens : 0;
  }
  // What the storage itself delivered (under emulation, a device slower than the emulated
  // rate set the pace: bench/device_pace.h); 0 when nothing streamed.
  double device_bytes_per_s() const { return device_seconds > 0 ? bytes_read / device_seconds : 0; }
  double bytes_per_token() const {
    return generated_tokens > 0 ? static_cast<double>(bytes_read) / generated_tokens : 0;
  }

 private:
  double per_token_ms(double seconds) const { return decode_tokens > 0 ? 1e3 * seconds / decode_tokens : 0; }
};

// One row per method and budget, in run order. With repetitions, the row is the
// repetition with the median decode rate (the lower middle one for an even count), so every
// column of a row comes from one real run.
std::vector<SummaryRow> summarize_runs(const BenchResult& result);
// The same per (dataset, category), categories in order of first appearance.
std::vector<SummaryRow> summarize_categories(const BenchResult& result);

}  // namespace sf::bench
