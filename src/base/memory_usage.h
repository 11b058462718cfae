// Process memory figures from /proc/self/status (Linux). Peak RSS is VmHWM.
#pragma once

#include <cstdint>

namespace sf {
uint64_t peak_rss_bytes();
uint64_t current_rss_bytes();
}  // namespace sf
