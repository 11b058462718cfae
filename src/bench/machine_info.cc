#include "bench/machine_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "quant/dot_kernel.h"

namespace sf::bench {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// stdout of a shell command, trimmed; "" when it fails.
std::string run_capture(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "";
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  return pclose(pipe) == 0 ? trim(out) : "";
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

MachineInfo read_machine_info() {
  MachineInfo info;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    // Every core repeats it; the first is enough. ARM kernels may have none: "unknown".
    if (line.rfind("model name", 0) == 0 && info.cpu_model == "unknown") {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) info.cpu_model = trim(line.substr(colon + 1));
    }
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  info.cores = online > 0 ? static_cast<int>(online) : 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemTotal: %llu kB", &kib) == 1) info.memory_bytes = kib * 1024;
  }
  utsname u{};
  if (uname(&u) == 0) info.kernel = std::string(u.sysname) + " " + u.release;
  const std::vector<int64_t> targets = dot_kernel_targets();  // best first; find_dot_kernel uses it
  info.simd = targets.empty() ? "scalar" : dot_kernel_target_name(targets.front());
  return info;
}

std::string git_commit() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string dir = ec ? "." : exe.parent_path().string();
  const std::string git = "git -C " + shell_quote(dir) + " ";
  const std::string commit = run_capture(git + "rev-parse --short=12 HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const std::string changes = run_capture(git + "status --porcelain --untracked-files=no 2>/dev/null");
  return changes.empty() ? commit : commit + "+dirty";
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace sf::bench
