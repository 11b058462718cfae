// Wall-clock timing helpers for statistics (never for pass/fail decisions).
#pragma once

#include <chrono>

namespace sf {

inline double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

class Stopwatch {
 public:
  Stopwatch() : start_(now_seconds()) {}
  double elapsed() const { return now_seconds() - start_; }
  void reset() { start_ = now_seconds(); }

 private:
  double start_;
};

// Adds the elapsed time of a scope to an accumulator.
class ScopedTimer {
 public:
  explicit ScopedTimer(double* sink) : sink_(sink), start_(now_seconds()) {}
  ~ScopedTimer() { *sink_ += now_seconds() - start_; }

 private:
  double* sink_;
  double start_;
};

}  // namespace sf
