#include "bench/bench_report.h"

#include <algorithm>
#include <cstdio>

#include "weights/memory_budget.h"

namespace sf::bench {
namespace {

using OJson = nlohmann::ordered_json;

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string equal_cell(const SummaryRow& row) {
  if (row.method == method_name(BenchMethod::kAr)) return "ref";
  if (row.compared_to_ar == 0) return "-";
  return std::to_string(row.equal_to_ar) + "/" + std::to_string(row.compared_to_ar);
}

// The decode rate; with repetitions, the median and the range of all of them.
std::string rate_cell(const SummaryRow& r) {
  std::string cell = fmt("%.2f", r.tokens_per_s());
  if (r.repetition_rates.size() > 1) {
    const auto [lo, hi] = std::minmax_element(r.repetition_rates.begin(), r.repetition_rates.end());
    cell += " (" + fmt("%.1f", *lo) + "-" + fmt("%.1f", *hi) + ")";
  }
  return cell;
}

// Where each row's decode time goes, per decode token.
std::string time_split_table(const std::vector<SummaryRow>& rows) {
  std::string out =
      "\nTime per decode token (ms): the draft (drafting in the cycle, for speculative methods), the target's "
      "waits for streamed weights (I/O stall) and the rest (the target's compute and the cycle's bookkeeping).\n\n"
      "| method | budget | draft | I/O stall | compute | total |\n|---|---|--:|--:|--:|--:|\n";
  for (const SummaryRow& r : rows) {
    if (r.prompts == 0) continue;
    out += "| " + r.method + " | " + r.budget + " | " + fmt("%.3f", r.draft_ms_per_token()) + " | " +
           fmt("%.3f", r.io_stall_ms_per_token()) + " | " + fmt("%.3f", r.compute_ms_per_token()) + " | " +
           fmt("%.3f", r.tokens_per_s() > 0 ? 1e3 / r.tokens_per_s() : 0) + " |\n";
  }
  return out;
}

// One Markdown table; `by_category` adds the dataset and category columns.
std::string table(const std::vector<SummaryRow>& rows, bool by_category) {
  std::string out = by_category ? "| dataset | category " : "";
  out +=
      "| method | budget | prompts | tok/s | speedup | mean accepted | tree nodes | rows kept | retained | bytes "
      "read/token | BPT | peak RSS | = AR | prefill ms |\n";
  out += by_category ? "|---|---" : "";
  out += "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const SummaryRow& r : rows) {
    if (r.prompts == 0) continue;
    if (by_category) out += "| " + r.dataset + " | " + r.category + " ";
    out += "| " + r.method + " | " + r.budget + " | " + std::to_string(r.prompts) + " | " + rate_cell(r) + " | " +
           (r.speedup ? fmt("%.2fx", *r.speedup) : "-") + " | " + fmt("%.2f", r.mean_accepted()) + " | " +
           (r.spec.cycles ? fmt("%.1f", r.tree_nodes()) : "-") + " | " +
           (r.rows_kept() ? fmt("%.0f%%", 100 * *r.rows_kept()) : "-") + " | " +
           (r.retained() ? fmt("%.0f%%", 100 * *r.retained()) : "-") + " | " +
           format_bytes(static_cast<uint64_t>(r.bytes_per_token())) + " | " +
           format_bytes(static_cast<uint64_t>(r.decode_bpt())) + " | " + format_bytes(r.peak_rss_bytes) + " | " +
           equal_cell(r) + " | " + fmt("%.1f", 1e3 * r.prefill_seconds / r.prompts) + " |\n";
  }
  return out;
}

// Mirror-SD rows: fallback frequency (FF, paper appendix E) and the latency terms of
// eq. 10 per cycle, next to the measured cycle time (draft + verify).
std::string mirror_table(const std::vector<SummaryRow>& rows) {
  std::string out;
  for (const SummaryRow& r : rows) {
    const SpecStats& sp = r.spec;
    if (r.prompts == 0 || sp.mirror_cycles == 0) continue;
    if (out.empty())
      out =
          "\nMirror-SD (per cycle with rollouts; T = T_fresh + T_prefix + T_channel + max(T_suffix, T_draft), "
          "measured = draft + verify wall time):\n\n"
          "| method | budget | cycles | fallback freq | rollout tokens/cycle | kept/cycle | T_prefix ms | T_channel ms "
          "| "
          "T_suffix ms | T_draft ms | T ms | measured ms |\n"
          "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
    const double n = static_cast<double>(sp.cycles);
    const double m = static_cast<double>(sp.mirror_cycles);
    out += "| " + r.method + " | " + r.budget + " | " + std::to_string(sp.mirror_cycles) + " | " +
           fmt("%.3f", sp.mirror_fallbacks / m) + " | " + fmt("%.1f", sp.rollout_tokens / m) + " | " +
           fmt("%.2f", sp.rollout_kept / m) + " | " + fmt("%.2f", 1e3 * sp.prefix_seconds / n) + " | " +
           fmt("%.2f", 1e3 * sp.channel_seconds / n) + " | " + fmt("%.2f", 1e3 * sp.suffix_seconds / n) + " | " +
           fmt("%.2f", 1e3 * sp.rollout_seconds / n) + " | " + fmt("%.2f", 1e3 * sp.model_seconds / n) + " | " +
           fmt("%.2f", 1e3 * (sp.draft_seconds + sp.verify_seconds) / n) + " |\n";
  }
  return out;
}

// "io_uring, O_DIRECT" from the first run that streams; the rate is labelled EMULATED
// whenever it is not the device's own.
std::string storage_line(const ReportContext& context, const BenchResult& result) {
  std::string backend;
  for (const RunResult& run : result.runs) {
    if (run.session.io_backend == "none") continue;
    backend = run.session.io_backend + (run.session.direct_io ? ", O_DIRECT" : ", buffered");
    break;
  }
  std::string line =
      context.io_bandwidth > 0 ? "EMULATED at " + fmt("%.2f GB/s", context.io_bandwidth / 1e9) : "the real device";
  return line + (backend.empty() ? " (no run streamed)" : " (" + backend + ")");
}

std::string sampling_text(const BenchConfig& config) {
  if (config.sampling.greedy()) return "greedy";
  return "temperature " + fmt("%.2f", config.sampling.temperature) + ", seed " + std::to_string(config.sampling.seed);
}

OJson row_json(const SummaryRow& r) {
  OJson j;
  j["method"] = r.method;
  j["budget"] = r.budget;
  if (!r.dataset.empty()) j["dataset"] = r.dataset;
  if (!r.category.empty()) j["category"] = r.category;
  j["prompts"] = r.prompts;
  j["prompt_tokens"] = r.prompt_tokens;
  j["generated_tokens"] = r.generated_tokens;
  j["decode_tokens"] = r.decode_tokens;
  j["decode_seconds"] = r.decode_seconds;
  j["prefill_seconds"] = r.prefill_seconds;
  j["decode_tokens_per_s"] = r.tokens_per_s();
  j["prefill_tokens_per_s"] = r.prefill_tokens_per_s();
  j["speedup_vs_flash_ar"] = r.speedup ? OJson(*r.speedup) : OJson(nullptr);
  j["repetition_tokens_per_s"] = r.repetition_rates;
  j["decode_io_stall_seconds"] = r.decode_io_stall_seconds;
  j["time_split_ms_per_token"] = {{"draft", r.draft_ms_per_token()},
                                  {"io_stall", r.io_stall_ms_per_token()},
                                  {"compute", r.compute_ms_per_token()}};
  j["mean_accepted"] = r.mean_accepted();
  j["bytes_read"] = r.bytes_read;
  j["bytes_read_per_token"] = r.bytes_per_token();
  j["device_bytes_per_s"] = r.device_bytes_per_s();
  j["decode_weight_bytes"] = r.decode_weight_bytes;
  j["decode_bpt"] = r.decode_bpt();
  j["decode_stream_bytes"] = r.decode_stream_bytes;
  j["decode_stream_bytes_per_token"] = r.decode_stream_bytes_per_token();
  j["forward_passes"] = r.forward_passes;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["equal_to_ar"] = r.equal_to_ar;
  j["compared_to_ar"] = r.compared_to_ar;
  j["spec"] = {{"cycles", r.spec.cycles},
               {"draft_tokens", r.spec.draft_tokens},
               {"accepted_draft_tokens", r.spec.accepted_draft_tokens},
               {"rows_verified", r.spec.rows_verified},
               {"head_rows", r.spec.head_rows},
               {"head_rows_saved", r.spec.head_rows_saved},
               {"rows_pruned", r.spec.rows_pruned},
               {"shadow_rows_kept", r.spec.shadow_rows_kept},
               {"shadow_accepted", r.spec.shadow_accepted},
               {"max_tree_nodes", r.spec.max_tree_nodes},
               {"draft_seconds", r.spec.draft_seconds},
               {"verify_seconds", r.spec.verify_seconds},
               {"verify_io_stall_seconds", r.spec.verify_io_stall_seconds},
               {"corrections", r.spec.corrections},
               {"accepted_corrections", r.spec.accepted_corrections},
               // Drafting during the target's I/O (edgellm, and auto's EdgeLLM arm): the cycles
               // that lent, the tokens drafted and kept, the seconds of draft work and of waits lent.
               {"provisional_cycles", r.spec.provisional_cycles},
               {"provisional_tokens", r.spec.provisional_tokens},
               {"provisional_kept", r.spec.provisional_kept},
               {"provisional_seconds", r.spec.provisional_seconds},
               {"provisional_lent_seconds", r.spec.provisional_lent_seconds}};
  if (r.spec.mirror_cycles > 0)
    j["mirror"] = {{"cycles_with_rollouts", r.spec.mirror_cycles},
                   {"reused", r.spec.mirror_reused},
                   {"fallbacks", r.spec.mirror_fallbacks},
                   {"fallback_frequency", static_cast<double>(r.spec.mirror_fallbacks) / r.spec.mirror_cycles},
                   {"rollout_tokens", r.spec.rollout_tokens},
                   {"rollout_kept", r.spec.rollout_kept},
                   {"prefix_seconds", r.spec.prefix_seconds},
                   {"channel_seconds", r.spec.channel_seconds},
                   {"suffix_seconds", r.spec.suffix_seconds},
                   {"rollout_seconds", r.spec.rollout_seconds},
                   {"model_seconds", r.spec.model_seconds}};
  if (r.method.rfind("auto", 0) == 0) {  // auto, auto:P, auto-cold
    OJson policies = OJson::array();
    for (const PolicyUse& u : r.policies)
      policies.push_back({{"policy", u.policy}, {"cycles", u.cycles}, {"tokens", u.tokens}, {"seconds", u.seconds}});
    j["auto_policies"] = policies;
  }
  j["tree_nodes"] = r.tree_nodes();
  j["rows_kept"] = r.rows_kept() ? OJson(*r.rows_kept()) : OJson(nullptr);
  j["retained"] = r.retained() ? OJson(*r.retained()) : OJson(nullptr);
  return j;
}

OJson session_json(const SessionInfo& s) {
  return {{"threads", s.threads},
          {"load_seconds", s.load_seconds},
          {"residency", s.residency},
          {"io_backend", s.io_backend},
          {"direct_io", s.direct_io},
          {"io_bandwidth_emulated", s.emulated_io},
          {"resident_weight_bytes", s.resident_weight_bytes},
          {"streamed_bytes_per_pass", s.streamed_bytes_per_pass},
          {"memory_footprint_bytes", s.footprint_bytes},
          {"memory_budget_bytes", s.budget_bytes},
          {"peak_rss_reset", s.peak_rss_reset}};
}

OJson prompt_run_json(const RunResult& run, const PromptRun& pr, const PreparedPrompt& p) {
  const GenerationStats& s = pr.stats;
  OJson j;
  j["method"] = method_name(run.method);
  j["budget"] = run.budget.label;
  j["repetition"] = run.repetition;
  j["id"] = p.prompt.id;
  j["prompt_tokens"] = s.prompt_tokens;
  j["generated_tokens"] = s.generated_tokens;
  j["decode_seconds"] = s.decode_seconds;
  j["prefill_seconds"] = s.prefill_seconds;
  j["decode_tokens_per_s"] = s.decode_tokens_per_s();
  j["mean_accepted"] = s.mean_accepted();
  j["bytes_read"] = s.counters.stream.bytes_read;
  j["io_seconds"] = s.counters.stream.io_seconds;
  j["device_seconds"] = s.counters.stream.device_seconds;
  j["io_stall_seconds"] = s.counters.stream.io_stall_seconds;
  j["forward_passes"] = s.counters.forward_passes;
  j["peak_rss_bytes"] = s.peak_rss_bytes;
  j["spec_cycles"] = s.spec.cycles;
  j["accepted_draft_tokens"] = s.spec.accepted_draft_tokens;
  j["equal_to_ar"] = pr.equal_to_ar ? OJson(*pr.equal_to_ar) : OJson(nullptr);
  j["tokens"] = pr.tokens;
  return j;
}

}  // namespace

std::string quote_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789-_./=:,%+@") == std::string::npos;
    std::string quoted = "'";
    for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (i ? " " : "") + (plain ? arg : quoted + "'");
  }
  return line;
}

std::string markdown_report(const ReportContext& context, const BenchConfig& config, const BenchResult& result,
                            const std::vector<SummaryRow>& rows, const std::vector<SummaryRow>& category_rows) {
  const MachineInfo& m = context.machine;
  const int threads = result.runs.empty() ? 0 : result.runs.front().session.threads;
  std::string out = "## specflash bench\n\n";
  out += "- machine: " + m.cpu_model + " (" + std::to_string(m.cores) + " cores, " + format_bytes(m.memory_bytes) +
         " RAM, SIMD " + m.simd + "), " + m.kernel + "\n";
  out += "- commit: " + context.commit + "\n";
  out += "- target: " + context.model_path + " (" + result.target_description + ")\n";
  if (!context.draft_model_path.empty()) out += "- draft: " + context.draft_model_path + "\n";
  out += "- command: `" + context.command_line + "`\n";
  out += "- threads: " + std::to_string(threads) + "; n_predict: " + std::to_string(config.n_predict) +
         "; sampling: " + sampling_text(config) +
         (result.chat_template.empty() ? "" : "; chat template: " + result.chat_template) + "\n";
  out += "- prompts: " + context.prompt_source + " (" + std::to_string(result.prompts.size()) + ")\n";
  out += "- storage: " + storage_line(context, result) + "\n";
  if (!context.preset.empty()) out += "- preset: " + context.preset + "\n";
  if (!context.auto_profile.empty()) out += "- auto's profile: " + context.auto_profile + "\n";
  out += "- date: " + context.date + "\n\n";
  out += table(rows, false);
  out += time_split_table(rows);
  out += mirror_table(rows);
  if (config.per_category) out += "\n" + table(category_rows, true);
  out +=
      "\ntok/s: decode tokens / decode time, summed over prompts (the first token, sampled from the prefill's "
      "logits, is not counted)" +
      std::string(config.repetitions > 1 ? "; the median of " + std::to_string(config.repetitions) +
                                               " repetitions (each a fresh session with its warm-up) and their range, "
                                               "and every other column of the row is from that median repetition"
                                         : "") +
      ". "
      "speedup: over flash-ar at the same budget. mean accepted: tokens per target pass. "
      "bytes read/token: streamed bytes (prefill included) per generated token. = AR: prompts whose tokens equal "
      "ar's. prefill ms: mean prefill time per prompt, the time to the first token (coordgen's calibration "
      "included).\n";
  if (!config.sampling.greedy())
    out +=
        "With sampling, = AR is expected of the plain methods only (same seed, same tokens); speculative methods "
        "keep the output distribution, not the tokens.\n";
  if (context.io_bandwidth > 0)
    out += context.device_pace.runs_below_emulated > 0
               ? "Storage bandwidth is EMULATED, but this machine's storage was slower than the emulated rate in some "
                 "runs (see the note below): there the rates are this storage's own.\n"
               : "Storage bandwidth is EMULATED; rates are not those of this machine's disk.\n";
  for (const std::string& note : result.notes) out += "\nnote: " + note;
  if (!result.notes.empty()) out += "\n";
  return out;
}

OJson json_report(const ReportContext& context, const BenchConfig& config, const BenchResult& result,
                  const std::vector<SummaryRow>& rows, const std::vector<SummaryRow>& category_rows) {
  OJson meta;
  meta["machine"] = {{"cpu", context.machine.cpu_model},
                     {"cores", context.machine.cores},
                     {"memory_bytes", context.machine.memory_bytes},
                     {"kernel", context.machine.kernel},
                     {"simd", context.machine.simd}};
  meta["commit"] = context.commit;
  meta["date"] = context.date;
  meta["command"] = context.command_line;
  meta["model"] = {{"path", context.model_path}, {"description", result.target_description}};
  meta["draft_model"] = context.draft_model_path.empty() ? OJson(nullptr) : OJson(context.draft_model_path);
  meta["threads"] = result.runs.empty() ? 0 : result.runs.front().session.threads;
  meta["n_predict"] = config.n_predict;
  meta["warmup"] = config.warmup;
  meta["repetitions"] = config.repetitions;
  meta["sampling"] = {{"temperature", config.sampling.temperature}, {"seed", config.sampling.seed}};
  meta["ignore_eos"] = config.ignore_eos;
  meta["chat_template"] = result.chat_template.empty() ? OJson(nullptr) : OJson(result.chat_template);
  meta["draft_len"] = config.draft_len;
  meta["tree_widths"] = config.tree_widths;
  meta["io_bandwidth_bytes_per_s"] = context.io_bandwidth;
  meta["io_bandwidth_emulated"] = context.io_bandwidth > 0;
  meta["storage_device_bytes_per_s"] = context.device_pace.device_bytes_per_s;
  meta["preset"] = context.preset.empty() ? OJson(nullptr) : OJson(context.preset);
  meta["auto_profile"] = context.auto_profile.empty() ? OJson(nullptr) : OJson(context.auto_profile);
  meta["prompt_source"] = context.prompt_source;
  meta["notes"] = result.notes;

  OJson j;
  j["meta"] = meta;
  j["rows"] = OJson::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    OJson row = row_json(rows[i]);
    if (rows[i].run_index < result.runs.size()) row["session"] = session_json(result.runs[rows[i].run_index].session);
    j["rows"].push_back(std::move(row));
  }
  j["categories"] = OJson::array();
  for (const SummaryRow& r : category_rows)
    if (r.prompts > 0) j["categories"].push_back(row_json(r));
  j["prompt_set"] = OJson::array();
  for (const PreparedPrompt& p : result.prompts)
    j["prompt_set"].push_back({{"id", p.prompt.id},
                               {"dataset", p.prompt.dataset},
                               {"category", p.prompt.category},
                               {"tokens", p.ids.size()},
                               {"original_tokens", p.original_tokens},
                               {"text", p.prompt.text}});
  j["prompts"] = OJson::array();
  for (const RunResult& run : result.runs)
    for (const PromptRun& pr : run.prompts) j["prompts"].push_back(prompt_run_json(run, pr, result.prompts[pr.prompt]));
  return j;
}

}  // namespace sf::bench
