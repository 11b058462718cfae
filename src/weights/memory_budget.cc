#include "weights/memory_budget.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sf {
namespace {

// Splits "1.5GiB" into 1.5 and "GIB". Fails on anything that is not a number + suffix.
bool split_number(std::string_view text, double* value, std::string* suffix) {
  std::string s(text);
  char* end = nullptr;
  *value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(*value) || *value < 0) return false;
  suffix->clear();
  for (const char* p = end; *p; ++p)
    if (!std::isspace(static_cast<unsigned char>(*p))) suffix->push_back(static_cast<char>(std::toupper(*p)));
  return true;
}

}  // namespace

Result<MemoryBudget> MemoryBudget::parse(std::string_view text) {
  MemoryBudget b;
  if (text.empty() || text == "unlimited") return b;
  double value = 0;
  std::string suffix;
  if (!split_number(text, &value, &suffix))
    return Status::Errorf("invalid memory budget '%.*s' (examples: 300M, 2G, 25%%)", static_cast<int>(text.size()),
                          text.data());
  if (suffix == "%") {
    if (value > 100) return Status::Errorf("memory budget share %.1f%% is over 100%%", value);
    if (value == 100) return b;
    b.kind = Kind::kModelShare;
    b.share = value / 100.0;
    return b;
  }
  double scale = 0;
  if (suffix.empty() || suffix == "B")
    scale = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  if (scale == 0)
    return Status::Errorf("invalid memory budget '%.*s': unknown unit '%s' (use K, M, G or %%)",
                          static_cast<int>(text.size()), text.data(), suffix.c_str());
  b.kind = Kind::kBytes;
  b.bytes = static_cast<uint64_t>(value * scale);
  return b;
}

std::string MemoryBudget::to_string() const {
  char buf[64];
  switch (kind) {
    case Kind::kUnlimited:
      return "unlimited";
    case Kind::kModelShare:
      std::snprintf(buf, sizeof(buf), "%.0f%% of the model", share * 100);
      return buf;
    case Kind::kBytes:
      return format_bytes(bytes);
  }
  return "";
}

Result<double> parse_bandwidth(std::string_view text) {
  double value = 0;
  std::string suffix;
  if (!split_number(text, &value, &suffix))
    return Status::Errorf("invalid bandwidth '%.*s' (examples: 4G, 2G, 800M bytes/s)", static_cast<int>(text.size()),
                          text.data());
  if (!suffix.empty() && suffix.back() == 'S' && suffix.size() > 1 && suffix[suffix.size() - 2] == '/')
    suffix.resize(suffix.size() - 2);  // accept "2G/s" and "2GB/s"
  double scale = 0;
  if (suffix.empty() || suffix == "B")
    scale = 1;
  else if (suffix == "K" || suffix == "KB")
    scale = 1e3;
  else if (suffix == "M" || suffix == "MB")
    scale = 1e6;
  else if (suffix == "G" || suffix == "GB")
    scale = 1e9;
  if (scale == 0)
    return Status::Errorf("invalid bandwidth '%.*s': unknown unit '%s' (use K, M or G bytes/s)",
                          static_cast<int>(text.size()), text.data(), suffix.c_str());
  return value * scale;
}

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= (1ull << 30))
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / 1073741824.0);
  else if (bytes >= (1ull << 20))
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  else
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

}  // namespace sf
