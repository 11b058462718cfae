// Where a benchmark ran: the facts a report header needs so two tables can be compared
// (or known not to be comparable). Linux /proc files; missing facts read as "unknown".
#pragma once

#include <cstdint>
#include <string>

namespace sf::bench {

struct MachineInfo {
  std::string cpu_model = "unknown";  // /proc/cpuinfo "model name"
  int cores = 0;                      // logical CPUs online
  uint64_t memory_bytes = 0;          // /proc/meminfo MemTotal
  std::string kernel = "unknown";     // uname -sr
  // The SIMD instruction set the kernels dispatch to here (Highway's best target compiled in
  // and supported by this CPU, e.g. "AVX2" or "AVX3_ZEN4"): two machines with the same model
  // name can differ in it (a VM's CPU flags), and it moves every compute-bound row.
  std::string simd = "unknown";
};

MachineInfo read_machine_info();

// Short commit of the source tree the executable was built in (git run in the
// executable's folder, so it works from any working directory), with "+dirty" when
// tracked files have changes; "unknown" without git or outside a repository.
std::string git_commit();

// "2025-01-31 12:34:56 UTC".
std::string utc_timestamp();

}  // namespace sf::bench
