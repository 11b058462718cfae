#include "weights/read_stepper.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sf {
namespace {
// A device that keeps answering EAGAIN (or a signal storm) must end in an error, not a
// silent spin; real transient conditions clear within a few retries.
constexpr int kMaxConsecutiveRetries = 64;
}  // namespace

ReadStepper::ReadStepper(const DirectReaderOptions& options, int fd, bool direct, std::string path, uint64_t file_size)
    : options_(options), fd_(fd), direct_(direct), path_(std::move(path)), file_size_(file_size) {
  max_bytes_per_read_ = options.test_max_bytes_per_read;
  if (max_bytes_per_read_ > 0 && direct_) {
    // O_DIRECT rejects unaligned lengths with EINVAL, so a forced short read must still be a
    // whole number of blocks.
    max_bytes_per_read_ = std::max<uint64_t>(DirectReader::kAlignment,
                                             max_bytes_per_read_ / DirectReader::kAlignment * DirectReader::kAlignment);
  }
}

ReadPlan ReadStepper::plan(const ReadChunk& chunk) {
  ReadPlan p;
  p.length = chunk.length;
  if (max_bytes_per_read_ > 0) p.length = std::min(p.length, max_bytes_per_read_);
  const uint64_t n = reads_planned_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (options_.test_fail_offset >= 0) {
    const auto fail_at = static_cast<uint64_t>(options_.test_fail_offset);
    if (fail_at >= chunk.offset && fail_at < chunk.offset + p.length) p.injected_errno = EIO;
  }
  // "Once": the retry of an interrupted read is never interrupted again, so progress is
  // guaranteed even with test_eintr_every = 1.
  if (p.injected_errno == 0 && options_.test_eintr_every > 0 && chunk.retries == 0 &&
      n % static_cast<uint64_t>(options_.test_eintr_every) == 0) {
    const uint64_t k = interrupts_injected_.fetch_add(1, std::memory_order_relaxed);
    p.injected_errno = k % 2 == 0 ? EINTR : EAGAIN;
  }
  return p;
}

void ReadStepper::drop_cached_pages(const ReadChunk& chunk) const {
  // Buffered fallback only: the read went through the page cache; evict what it brought in
  // so the next pass really reads storage again. Advisory, so its result does not matter.
  if (!direct_)
    (void)posix_fadvise(fd_, static_cast<off_t>(chunk.span_offset), static_cast<off_t>(chunk.span_length),
                        POSIX_FADV_DONTNEED);
}

ReadStepper::Next ReadStepper::apply(ReadChunk& chunk, const ReadPlan& plan, int64_t result, Status* error) {
  if (result < 0) {
    const int err = static_cast<int>(-result);
    if ((err == EINTR || err == EAGAIN) && ++chunk.retries <= kMaxConsecutiveRetries) return Next::kRetry;
    *error = Status::Errorf("%s: read of %llu bytes at offset %llu failed: %s%s", path_.c_str(),
                            static_cast<unsigned long long>(plan.length), static_cast<unsigned long long>(chunk.offset),
                            std::strerror(err), err == EINTR || err == EAGAIN ? " (still failing after retries)" : "");
    drop_cached_pages(chunk);
    return Next::kFailed;
  }
  const auto got = static_cast<uint64_t>(result);
  bytes_read_.fetch_add(got, std::memory_order_relaxed);
  chunk.dst += got;
  chunk.offset += got;
  chunk.length -= got;
  chunk.retries = 0;
  // End of file: a zero-byte read, or (O_DIRECT) a partial block, which the kernel returns
  // only at EOF; reading on from an unaligned offset would fail with EINVAL.
  const bool at_eof = got == 0 || (direct_ && got % DirectReader::kAlignment != 0);
  if (chunk.length > 0 && at_eof) {
    if (chunk.offset < file_size_) {
      *error = Status::Errorf(
          "%s: the file ends at offset %llu but was %llu bytes when opened: it was truncated or rewritten while "
          "being read",
          path_.c_str(), static_cast<unsigned long long>(chunk.offset), static_cast<unsigned long long>(file_size_));
      drop_cached_pages(chunk);
      return Next::kFailed;
    }
    std::memset(chunk.dst, 0, chunk.length);
    chunk.length = 0;
  }
  if (chunk.length > 0) return Next::kRetry;  // short read: ask for the remainder
  drop_cached_pages(chunk);
  return Next::kDone;
}

}  // namespace sf
