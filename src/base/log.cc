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
void emit(LogLevel level, const char* text) { std::fprintf(stderr, "%s%s\n", level_prefix(level), text); }
}  // namespace

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

void log_message(LogLevel level, const char* fmt, ...) {
  if (static_cast<int>(level) > g_level.load()) return;
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  emit(level, buf);
}

bool log_message_once(LogLevel level, const char* fmt, ...) {
  if (static_cast<int>(level) > g_level.load()) return false;
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  // The messages said so far; few and short (a run's distinct warnings).
  static std::mutex mutex;
  static std::set<std::pair<int, std::string>> said;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!said.emplace(static_cast<int>(level), buf).second) return false;
  }
  emit(level, buf);
  return true;
}

}  // namespace sf
