#include "bench/device_pace.h"

#include <cstdio>

namespace sf::bench {

DevicePace measure_device_pace(const BenchResult& result, double emulated_bytes_per_s) {
  DevicePace pace;
  double all_bytes = 0, all_seconds = 0;
  for (const RunResult& run : result.runs) {
    double bytes = 0, seconds = 0;
    for (const PromptRun& pr : run.prompts) {
      bytes += static_cast<double>(pr.stats.counters.stream.bytes_read);
      seconds += pr.stats.counters.stream.device_seconds;
    }
    if (bytes <= 0 || seconds <= 0) continue;
    ++pace.streamed_runs;
    if (emulated_bytes_per_s > 0 && bytes / seconds < emulated_bytes_per_s) ++pace.runs_below_emulated;
    all_bytes += bytes;
    all_seconds += seconds;
  }
  pace.device_bytes_per_s = all_seconds > 0 ? all_bytes / all_seconds : 0;
  return pace;
}

std::optional<std::string> device_pace_note(const DevicePace& pace, double emulated_bytes_per_s) {
  if (emulated_bytes_per_s <= 0 || pace.runs_below_emulated == 0) return std::nullopt;
  char buf[640];
  std::snprintf(buf, sizeof(buf),
                "storage EMULATED at %.2f GB/s, but this machine's own storage delivered %.2f GB/s over these runs "
                "(slower than the emulated rate in %d of %d streamed runs): emulation cannot make reads faster, so "
                "those runs measure this storage, not the emulated device; emulate a rate well below %.2f GB/s to "
                "reproduce one",
                emulated_bytes_per_s / 1e9, pace.device_bytes_per_s / 1e9, pace.runs_below_emulated, pace.streamed_runs,
                pace.device_bytes_per_s / 1e9);
  return std::string(buf);
}

}  // namespace sf::bench
