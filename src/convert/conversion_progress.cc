#include "convert/conversion_progress.h"

#include <cstdio>

namespace sf {
namespace {
// Below this many elements a conversion takes well under a second; only the summary.
constexpr uint64_t kVerboseThreshold = 50'000'000;
}  // namespace

ConversionProgress::ConversionProgress(std::string label, uint64_t total_work, size_t total_tensors, bool enabled)
    : label_(std::move(label)),
      total_work_(total_work),
      total_tensors_(total_tensors),
      enabled_(enabled),
      verbose_(enabled && total_work >= kVerboseThreshold),
      start_(std::chrono::steady_clock::now()) {}

double ConversionProgress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ConversionProgress::tensor_done(uint64_t work) {
  done_work_ += work;
  ++done_tensors_;
  if (!verbose_ || total_work_ == 0) return;
  const int decile = static_cast<int>(done_work_ * 10 / total_work_);
  if (decile >= next_decile_ && decile < 10) {
    std::fprintf(stderr, "%s: %3d%%  %zu/%zu tensors  %.1f s\n", label_.c_str(), decile * 10, done_tensors_,
                 total_tensors_, elapsed_seconds());
    next_decile_ = decile + 1;
  }
}

void ConversionProgress::finish(const std::string& path, uint64_t file_bytes) {
  if (!enabled_) return;
  std::fprintf(stderr, "%s: wrote %s: %zu tensors, %.1f MiB in %.1f s\n", label_.c_str(), path.c_str(), total_tensors_,
               file_bytes / 1048576.0, elapsed_seconds());
}

}  // namespace sf
