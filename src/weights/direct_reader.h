// DirectReader: asynchronous reads of byte ranges of one file, bypassing the page cache.
//
// The streamer reads every non-resident layer on every forward pass; if those reads went
// through the page cache, a model bigger than the memory budget would quietly be served
// from RAM on the second pass and the budget would be a lie (DESIGN.md invariant 3). So
// reads use O_DIRECT, and where the filesystem refuses O_DIRECT (tmpfs, some network
// filesystems) buffered reads followed by posix_fadvise(DONTNEED) on the range read.
//
// Backends: io_uring (one I/O thread owns the ring and keeps queue_depth chunk reads in
// flight) or, where io_uring is unavailable (old kernel, seccomp, container policy),
// pread_threads threads each doing blocking preads. Both split a request into chunk_bytes
// pieces, resubmit short reads, retry EINTR/EAGAIN and record the first error per request.
//
// Thread-safety: submit(), wait(), is_done() and the accounting getters may be called from
// any thread. Each ticket must be waited exactly once (waiting frees its bookkeeping); a
// second wait is a broken invariant (SF_CHECK). The destination buffer must stay valid
// until its ticket's wait() returns.
//
// Destruction: reads already handed to the kernel finish (so no buffer is written after the
// destructor returns); queued reads that had not started are cancelled. Do not destroy the
// reader while another thread is inside wait().
//
// Failure: open() returns a Status for a missing/unreadable file or invalid options. A read
// error is reported by wait() as a Status naming the path, offset and errno text; it never
// aborts and never affects other tickets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>

#include "base/status.h"

namespace sf {

struct DirectReaderOptions {
  enum class Backend { kAuto, kIoUring, kPread };
  // kAuto: io_uring, falling back to pread threads when io_uring setup fails (logged at Info).
  Backend backend = Backend::kAuto;
  // O_DIRECT. When the filesystem refuses it, reads are buffered and the pages dropped after
  // each read; direct() then reports false.
  bool direct = true;
  size_t chunk_bytes = 1 << 20;  // requests are split into chunks read in parallel; multiple of 4096
  int queue_depth = 16;          // io_uring: chunks in flight
  int pread_threads = 2;         // pread backend: worker threads (= chunks in flight)

  // Fault injection for tests. test_max_bytes_per_read caps each read syscall/SQE (rounded
  // down to 4096 under O_DIRECT) to force short reads. test_eintr_every = N makes every Nth
  // read fail once with EINTR (odd occurrences) or EAGAIN (even); the retry is not injected.
  // test_fail_offset makes every read covering that byte fail with EIO.
  size_t test_max_bytes_per_read = 0;
  int test_eintr_every = 0;
  int64_t test_fail_offset = -1;
};

class ReadQueue;
class ReadStepper;
class BusyClock;
class ReadBackend;

class DirectReader {
 public:
  static Result<std::unique_ptr<DirectReader>> open(const std::string& path, const DirectReaderOptions& opts = {});
  ~DirectReader();
  DirectReader(const DirectReader&) = delete;
  DirectReader& operator=(const DirectReader&) = delete;

  // dst, offset and length must be multiples of this (SF_CHECK); callers round spans.
  static constexpr size_t kAlignment = 4096;

  // Queues a read of [offset, offset + length) into dst and returns its ticket. Never
  // blocks on I/O. A length of 0 completes at once.
  uint64_t submit(void* dst, uint64_t offset, uint64_t length);
  // Blocks until the ticket's read completed. Returns its first I/O error, if any. Bytes past
  // end of file are zero-filled (the last span of a file is rounded up past EOF).
  Status wait(uint64_t ticket);
  bool is_done(uint64_t ticket) const;
  // An error naming the file when its modification time is no longer the one it had when
  // opened: another program wrote into it (in place, same size included), so bytes read
  // from it may mix old and new contents. One fstat; the streamer calls it after each unit
  // has arrived. (A file renamed over the path is not a change: the descriptor keeps the
  // opened file. A truncation is caught by the reads themselves: read_stepper.h.)
  Status check_unmodified() const;

  const char* backend_name() const;  // "io_uring" or "pread"
  bool direct() const { return direct_; }
  uint64_t file_size() const { return file_size_; }
  const std::string& path() const { return path_; }

  // Bytes returned by read syscalls (past-EOF zero fill is not counted), and seconds during
  // which at least one read was in flight (overlapping reads are not double-counted).
  uint64_t bytes_read() const;
  double busy_seconds() const;

 private:
  DirectReader() = default;

  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
  uint64_t file_size_ = 0;
  struct timespec opened_mtime_ = {};  // st_mtim at open
  size_t chunk_bytes_ = 0;
  // Declaration order is destruction order in reverse: the backend (which uses the others)
  // goes first.
  std::unique_ptr<ReadQueue> queue_;
  std::unique_ptr<BusyClock> busy_;
  std::unique_ptr<ReadStepper> stepper_;
  std::unique_ptr<ReadBackend> backend_;
};

}  // namespace sf
