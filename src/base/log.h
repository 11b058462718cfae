// Logging to stderr. stdout is reserved for generated text and command output, so
// everything diagnostic goes through here. Thread-safe (one fprintf per message).
#pragma once

#include <cstdio>

namespace sf {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log_message(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// As log_message, but a message this process already logged (the same level and text) is
// dropped: a condition that holds for every session of a run, such as a method's footprint at
// a budget, is said once, not once per repetition of a benchmark. Returns whether it logged.
bool log_message_once(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace sf

#define SF_LOG_ERROR(...) ::sf::log_message(::sf::LogLevel::kError, __VA_ARGS__)
#define SF_LOG_WARN(...) ::sf::log_message(::sf::LogLevel::kWarn, __VA_ARGS__)
#define SF_LOG_WARN_ONCE(...) ::sf::log_message_once(::sf::LogLevel::kWarn, __VA_ARGS__)
#define SF_LOG_INFO(...) ::sf::log_message(::sf::LogLevel::kInfo, __VA_ARGS__)
#define SF_LOG_DEBUG(...) ::sf::log_message(::sf::LogLevel::kDebug, __VA_ARGS__)
