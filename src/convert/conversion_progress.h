// Progress of a long conversion (quantize, synth) on stderr: a line at every 10% of the
// work for models big enough to take a while, then one summary line. Silent when
// disabled (tests, --quiet). Not thread-safe: call from the converting thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sf {

class ConversionProgress {
 public:
  // total_work in any unit (elements); label prefixes each line ("quantize").
  ConversionProgress(std::string label, uint64_t total_work, size_t total_tensors, bool enabled);

  void tensor_done(uint64_t work);
  // "quantize: wrote out.gguf: 201 tensors, 636.2 MiB in 8.4 s"
  void finish(const std::string& path, uint64_t file_bytes);
  double elapsed_seconds() const;

 private:
  std::string label_;
  uint64_t total_work_;
  size_t total_tensors_;
  bool enabled_;
  bool verbose_;  // per-10% lines; only for big conversions
  uint64_t done_work_ = 0;
  size_t done_tensors_ = 0;
  int next_decile_ = 1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sf
