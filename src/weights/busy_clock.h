// BusyClock: seconds during which at least one read was in flight. The time is the union
// of the in-flight intervals, so 16 overlapping reads of 1 ms count as about 1 ms, and
// bytes / busy_seconds is the bandwidth the device actually delivered while in use.
// Thread-safe.
#pragma once

#include <mutex>

#include "base/check.h"
#include "base/timer.h"

namespace sf {

class BusyClock {
 public:
  void begin() {
    std::lock_guard<std::mutex> lock(mu_);
    if (active_++ == 0) start_ = now_seconds();
  }
  void end() {
    std::lock_guard<std::mutex> lock(mu_);
    SF_CHECK(active_ > 0);
    if (--active_ == 0) total_ += now_seconds() - start_;
  }
  double seconds() const {
    std::lock_guard<std::mutex> lock(mu_);
    return total_ + (active_ > 0 ? now_seconds() - start_ : 0.0);
  }

 private:
  mutable std::mutex mu_;
  int active_ = 0;
  double start_ = 0;
  double total_ = 0;
};

}  // namespace sf
