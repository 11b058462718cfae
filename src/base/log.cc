#include "base/log.h"

#include <atomic>
#include <cstdarg>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace sf {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
const char* level_prefix(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error: ";
    case LogLevel::kWarn:
      return "warning: ";
    case LogLevel::kInfo:
      return "";
    case LogLevel::kDebug:
      return "debug: ";
  }
  return "";
}
// Both entry points: the level check, the text, and (once) whether it was said before.
bool log_formatted(LogLevel level, bool once, const char* fmt, va_list args) {
  if (static_cast<int>(level) > g_level.load()) return false;
  char buf[2048];
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  if (once) {
    // The messages said so far; few and short (a run's distinct warnings).
    static std::mutex mutex;
    static std::set<std::pair<int, std::string>> said;
    const std::lock_guard<std::mutex> lock(mutex);
    if (!said.emplace(static_cast<int>(level), buf).second) return false;
  }
  std::fprintf(stderr, "%s%s\n", level_prefix(level), buf);
  return true;
}
}  // namespace

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

void log_message(LogLevel level, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log_formatted(level, /*once=*/false, fmt, args);
  va_end(args);
}

bool log_message_once(LogLevel level, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const bool logged = log_formatted(level, /*once=*/true, fmt, args);
  va_end(args);
  return logged;
}

}  // namespace sf
