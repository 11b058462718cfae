// ReadStepper: what one read syscall (pread or an io_uring SQE) of a chunk should be, and
// what its result means. Both backends go through it, so short reads, EOF, EINTR/EAGAIN,
// errors, fault injection and byte accounting behave identically whichever is in use.
//
// Thread-safe (counters are atomic; chunks belong to the calling thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "weights/direct_reader.h"
#include "weights/read_queue.h"

namespace sf {

struct ReadPlan {
  uint64_t length = 0;     // bytes to ask for at chunk.offset into chunk.dst
  int injected_errno = 0;  // nonzero: do not read; the result is -injected_errno (tests)
};

class ReadStepper {
 public:
  // file_size: the size when the file was opened. Reads end there; end of file before it
  // means the file shrank under the reader (truncated, or replaced in place) and is an
  // error, not zeros: zero-filled weights would silently change every output.
  ReadStepper(const DirectReaderOptions& options, int fd, bool direct, std::string path, uint64_t file_size);

  ReadPlan plan(const ReadChunk& chunk);

  enum class Next { kDone, kRetry, kFailed };
  // result: bytes read (>= 0) or -errno. Advances the chunk past the bytes read; at end of
  // file (at or past file_size) zero-fills the rest; on kFailed sets *error. kRetry: issue the chunk again.
  Next apply(ReadChunk& chunk, const ReadPlan& plan, int64_t result, Status* error);

  uint64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }

 private:
  void drop_cached_pages(const ReadChunk& chunk) const;

  const DirectReaderOptions options_;
  const int fd_;
  const bool direct_;
  const std::string path_;
  const uint64_t file_size_;
  uint64_t max_bytes_per_read_;
  std::atomic<uint64_t> reads_planned_{0};
  std::atomic<uint64_t> interrupts_injected_{0};
  std::atomic<uint64_t> bytes_read_{0};
};

}  // namespace sf
