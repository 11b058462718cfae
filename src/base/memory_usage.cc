#include "base/memory_usage.h"

#include <cstdio>
#include <cstring>

namespace sf {
namespace {
uint64_t read_status_kb(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  const size_t key_len = std::strlen(key);
  while (std::fgets(line, sizeof(line), f)) {
    if (std::strncmp(line, key, key_len) == 0) {
      std::sscanf(line + key_len, " %lu", &kb);
      break;
    }
  }
  std::fclose(f);
  return kb * 1024;
}
}  // namespace

uint64_t peak_rss_bytes() { return read_status_kb("VmHWM:"); }
uint64_t current_rss_bytes() { return read_status_kb("VmRSS:"); }
}  // namespace sf
