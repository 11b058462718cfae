// The benchmark's outputs: a Markdown report (a header that says where and how it ran,
// then one table row per method and budget) and a JSON document with everything,
// per-prompt rows and generated token ids included, for later analysis.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_config.h"
#include "bench/bench_metrics.h"
#include "bench/bench_runner.h"
#include "bench/device_pace.h"
#include "bench/machine_info.h"

namespace sf::bench {

struct ReportContext {
  std::string command_line;  // as typed, shell-quoted where needed
  std::string model_path;
  std::string draft_model_path;  // "" when no method drafts
  double io_bandwidth = 0;       // EMULATED storage rate in bytes/s; 0 = the real device
  DevicePace device_pace;        // what the storage itself delivered (measure_device_pace)
  std::string prompt_source;     // "spec_bench:16" or the prompt file
  std::string preset;            // --preset's arithmetic (phone_regime.h), or ""
  std::string auto_profile;      // where auto's sessions kept what they learnt, or "" (no auto)
  MachineInfo machine;
  std::string commit;
  std::string date;
};

// Joins argv into one line, quoting arguments that the shell would split or expand.
std::string quote_command_line(int argc, char** argv);

std::string markdown_report(const ReportContext& context, const BenchConfig& config, const BenchResult& result,
                            const std::vector<SummaryRow>& rows, const std::vector<SummaryRow>& category_rows);

nlohmann::ordered_json json_report(const ReportContext& context, const BenchConfig& config, const BenchResult& result,
                                   const std::vector<SummaryRow>& rows, const std::vector<SummaryRow>& category_rows);

}  // namespace sf::bench
