// Whether emulated storage was really emulated. --io-bandwidth makes every read complete no
// sooner than a device of that rate would; it cannot make reads faster. Where this machine's
// own storage delivers less than the emulated rate (a 4 GB/s "UFS 4.0" on a ~1 GB/s virtual
// disk), the real device sets the pace and the runs measure it, not the emulated device:
// the report must say so instead of printing the emulated label alone.
//
// The device's rate is bytes read / the time at least one read was in flight
// (StreamStats::device_seconds), pooled over each run's prompts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/bench_runner.h"

namespace sf::bench {

struct DevicePace {
  int streamed_runs = 0;          // runs that read streamed weights
  int runs_below_emulated = 0;    // of those, runs whose device delivered less than the emulated rate
  double device_bytes_per_s = 0;  // pooled over every streamed run; 0 when nothing streamed
};

DevicePace measure_device_pace(const BenchResult& result, double emulated_bytes_per_s);

// A note for the report and stderr when some streamed run's device was slower than the
// emulated rate; nothing when the emulation held (or nothing is emulated or streamed).
std::optional<std::string> device_pace_note(const DevicePace& pace, double emulated_bytes_per_s);

}  // namespace sf::bench
