#include "bench/bench_metrics.h"

#include <algorithm>
#include <utility>

namespace sf::bench {
namespace {

void add(SummaryRow& row, const PromptRun& pr) {
  const GenerationStats& s = pr.stats;
  ++row.prompts;
  row.prompt_tokens += s.prompt_tokens;
  row.generated_tokens += s.generated_tokens;
  row.decode_tokens += static_cast<uint64_t>(s.decode_tokens());
  row.decode_seconds += s.decode_seconds;
  row.prefill_seconds += s.prefill_seconds;
  row.bytes_read += s.counters.stream.bytes_read;
  row.device_seconds += s.counters.stream.device_seconds;
  row.decode_weight_bytes += s.decode_weight_bytes;
  row.decode_stream_bytes += s.decode_stream_bytes;
  row.decode_io_stall_seconds += s.decode_io_stall_seconds;
  row.spec.corrections += s.spec.corrections;
  row.spec.accepted_corrections += s.spec.accepted_corrections;
  row.forward_passes += s.counters.forward_passes;
  row.peak_rss_bytes = std::max(row.peak_rss_bytes, s.peak_rss_bytes);
  row.spec.cycles += s.spec.cycles;
  row.spec.draft_tokens += s.spec.draft_tokens;
  row.spec.accepted_draft_tokens += s.spec.accepted_draft_tokens;
  row.spec.rows_verified += s.spec.rows_verified;
  row.spec.rows_pruned += s.spec.rows_pruned;
  row.spec.shadow_rows_kept += s.spec.shadow_rows_kept;
  row.spec.shadow_accepted += s.spec.shadow_accepted;
  row.spec.max_tree_nodes = std::max(row.spec.max_tree_nodes, s.spec.max_tree_nodes);
  row.spec.verify_io_stall_seconds += s.spec.verify_io_stall_seconds;
  row.spec.head_rows += s.spec.head_rows;
  row.spec.head_rows_saved += s.spec.head_rows_saved;
  row.spec.draft_seconds += s.spec.draft_seconds;
  row.spec.verify_seconds += s.spec.verify_seconds;
  row.spec.provisional_cycles += s.spec.provisional_cycles;
  row.spec.provisional_tokens += s.spec.provisional_tokens;
  row.spec.provisional_kept += s.spec.provisional_kept;
  row.spec.provisional_seconds += s.spec.provisional_seconds;
  row.spec.provisional_lent_seconds += s.spec.provisional_lent_seconds;
  row.spec.mirror_cycles += s.spec.mirror_cycles;
  row.spec.mirror_reused += s.spec.mirror_reused;
  row.spec.mirror_fallbacks += s.spec.mirror_fallbacks;
  row.spec.rollout_tokens += s.spec.rollout_tokens;
  row.spec.rollout_kept += s.spec.rollout_kept;
  row.spec.prefix_seconds += s.spec.prefix_seconds;
  row.spec.channel_seconds += s.spec.channel_seconds;
  row.spec.suffix_seconds += s.spec.suffix_seconds;
  row.spec.rollout_seconds += s.spec.rollout_seconds;
  row.spec.model_seconds += s.spec.model_seconds;
  add_policy_uses(s.cycles, &row.policies);
  if (pr.equal_to_ar) {
    ++row.compared_to_ar;
    row.equal_to_ar += *pr.equal_to_ar ? 1 : 0;
  }
}

SummaryRow empty_row(const RunResult& run) {
  SummaryRow row;
  row.method = method_name(run.method);
  row.budget = run.budget.label;
  return row;
}

// Speedup of each row over the flash-ar row with the same budget, dataset and category.
void fill_speedups(std::vector<SummaryRow>& rows) {
  for (SummaryRow& row : rows) {
    if (row.method == method_name(BenchMethod::kAr)) continue;
    for (const SummaryRow& base : rows) {
      if (base.method == method_name(BenchMethod::kFlashAr) && base.budget == row.budget &&
          base.dataset == row.dataset && base.category == row.category && base.tokens_per_s() > 0)
        row.speedup = row.tokens_per_s() / base.tokens_per_s();
    }
  }
}

}  // namespace

// Rows of the same method, budget, dataset and category (one per repetition) become the
// median one, with every repetition's rate recorded. Keeps first-appearance order.
std::vector<SummaryRow> take_medians(std::vector<SummaryRow> rows) {
  std::vector<SummaryRow> out;
  std::vector<bool> used(rows.size(), false);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (used[i]) continue;
    std::vector<SummaryRow*> group;
    for (size_t k = i; k < rows.size(); ++k) {
      const SummaryRow& r = rows[k];
      if (!used[k] && r.method == rows[i].method && r.budget == rows[i].budget && r.dataset == rows[i].dataset &&
          r.category == rows[i].category) {
        used[k] = true;
        group.push_back(&rows[k]);
      }
    }
    std::vector<double> rates;
    for (const SummaryRow* r : group) rates.push_back(r->tokens_per_s());
    std::stable_sort(group.begin(), group.end(),
                     [](const SummaryRow* a, const SummaryRow* b) { return a->tokens_per_s() < b->tokens_per_s(); });
    SummaryRow median = *group[(group.size() - 1) / 2];
    median.repetition_rates = std::move(rates);
    out.push_back(std::move(median));
  }
  return out;
}

std::vector<SummaryRow> summarize_runs(const BenchResult& result) {
  std::vector<SummaryRow> rows;
  for (size_t i = 0; i < result.runs.size(); ++i) {
    const RunResult& run = result.runs[i];
    SummaryRow row = empty_row(run);
    row.run_index = i;
    for (const PromptRun& pr : run.prompts) add(row, pr);
    rows.push_back(std::move(row));
  }
  rows = take_medians(std::move(rows));
  fill_speedups(rows);
  return rows;
}

std::vector<SummaryRow> summarize_categories(const BenchResult& result) {
  std::vector<std::pair<std::string, std::string>> groups;  // (dataset, category)
  for (const PreparedPrompt& p : result.prompts) {
    std::pair<std::string, std::string> key{p.prompt.dataset, p.prompt.category};
    if (std::find(groups.begin(), groups.end(), key) == groups.end()) groups.push_back(key);
  }
  std::vector<SummaryRow> rows;
  for (size_t i = 0; i < result.runs.size(); ++i) {
    const RunResult& run = result.runs[i];
    for (const auto& [dataset, category] : groups) {
      SummaryRow row = empty_row(run);
      row.run_index = i;
      row.dataset = dataset;
      row.category = category;
      for (const PromptRun& pr : run.prompts) {
        const Prompt& p = result.prompts[pr.prompt].prompt;
        if (p.dataset == dataset && p.category == category) add(row, pr);
      }
      rows.push_back(std::move(row));
    }
  }
  rows = take_medians(std::move(rows));
  fill_speedups(rows);
  return rows;
}

}  // namespace sf::bench
