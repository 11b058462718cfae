#include "weights/direct_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/aligned_buffer.h"
#include "base/check.h"
#include "base/log.h"
#include "weights/busy_clock.h"
#include "weights/pread_read_backend.h"
#include "weights/read_backend.h"
#include "weights/read_queue.h"
#include "weights/read_stepper.h"
#include "weights/uring_read_backend.h"

namespace sf {
namespace {

constexpr size_t kMaxChunkBytes = size_t{1} << 30;  // io_uring read lengths are 32-bit

Status check_options(const std::string& path, const DirectReaderOptions& o) {
  if (o.chunk_bytes == 0 || o.chunk_bytes % DirectReader::kAlignment != 0 || o.chunk_bytes > kMaxChunkBytes)
    return Status::Errorf("%s: chunk size %zu must be a multiple of 4096 between 4 KiB and 1 GiB", path.c_str(),
                          o.chunk_bytes);
  if (o.queue_depth < 1 || o.queue_depth > 4096)
    return Status::Errorf("%s: queue depth %d must be between 1 and 4096", path.c_str(), o.queue_depth);
  if (o.pread_threads < 1 || o.pread_threads > 256)
    return Status::Errorf("%s: pread threads %d must be between 1 and 256", path.c_str(), o.pread_threads);
  return Status::Ok();
}

// Some filesystems accept O_DIRECT at open() but refuse the reads (EINVAL); one aligned read
// of the first block finds out before any caller's read does.
bool direct_reads_work(int fd) {
  AlignedBuffer block(DirectReader::kAlignment, DirectReader::kAlignment);
  ssize_t r;
  do {
    r = ::pread(fd, block.data(), DirectReader::kAlignment, 0);
  } while (r < 0 && errno == EINTR);
  return !(r < 0 && errno == EINVAL);
}

}  // namespace

Result<std::unique_ptr<DirectReader>> DirectReader::open(const std::string& path, const DirectReaderOptions& opts) {
  SF_RETURN_IF_ERROR(check_options(path, opts));
  std::unique_ptr<DirectReader> r(new DirectReader());
  r->path_ = path;
  r->chunk_bytes_ = opts.chunk_bytes;
  r->direct_ = opts.direct;
  r->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (opts.direct ? O_DIRECT : 0));
  if (r->fd_ < 0 && opts.direct && errno == EINVAL) {
    r->direct_ = false;  // tmpfs and friends: no O_DIRECT at all
    r->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (r->fd_ < 0) return Status::Errorf("%s: cannot open: %s", path.c_str(), std::strerror(errno));
  struct stat st;
  if (fstat(r->fd_, &st) != 0) return Status::Errorf("%s: cannot stat: %s", path.c_str(), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::Errorf("%s: is a directory", path.c_str());
  r->opened_mtime_ = st.st_mtim;
  const off_t size = ::lseek(r->fd_, 0, SEEK_END);  // lseek, unlike fstat, also sizes block devices
  if (size < 0) return Status::Errorf("%s: cannot get size: %s", path.c_str(), std::strerror(errno));
  r->file_size_ = static_cast<uint64_t>(size);
  if (r->direct_ && r->file_size_ > 0 && !direct_reads_work(r->fd_)) {
    r->direct_ = false;
    SF_CHECK(fcntl(r->fd_, F_SETFL, fcntl(r->fd_, F_GETFL) & ~O_DIRECT) == 0);
  }
  if (!r->direct_) {
    // Readahead would bring in pages past each read that are still under I/O when the
    // read's range is dropped (DONTNEED skips locked pages), leaving half the file cached.
    (void)posix_fadvise(r->fd_, 0, 0, POSIX_FADV_RANDOM);
  }
  if (opts.direct && !r->direct_)
    SF_LOG_INFO("%s: filesystem refuses O_DIRECT; using buffered reads and dropping the cached pages after each",
                path.c_str());

  r->queue_ = std::make_unique<ReadQueue>();
  r->busy_ = std::make_unique<BusyClock>();
  r->stepper_ = std::make_unique<ReadStepper>(opts, r->fd_, r->direct_, path, r->file_size_);
  const ReadContext ctx{r->fd_, path, r->queue_.get(), r->stepper_.get(), r->busy_.get()};

  using Backend = DirectReaderOptions::Backend;
  if (opts.backend != Backend::kPread) {
    auto uring = UringReadBackend::create(ctx, opts.queue_depth);
    if (uring.ok()) {
      r->backend_ = std::move(uring).value();
    } else if (opts.backend == Backend::kIoUring) {
      return uring.status().with_context(path + ": io_uring unavailable");
    } else {
      SF_LOG_INFO("%s: io_uring unavailable (%s); falling back to %d pread threads", path.c_str(),
                  uring.status().message().c_str(), opts.pread_threads);
    }
  }
  if (!r->backend_) r->backend_ = std::make_unique<PreadReadBackend>(ctx, opts.pread_threads);
  SF_LOG_INFO("%s: reading with %s%s", path.c_str(), r->backend_->name(),
              r->direct_ ? " and O_DIRECT" : ", buffered + FADV_DONTNEED");
  return r;
}

DirectReader::~DirectReader() {
  // Cancel what has not started, then let the backend finish what the kernel already has
  // (it may still write into callers' buffers) before the descriptor goes away.
  if (queue_) queue_->close(path_);
  backend_.reset();
  if (fd_ >= 0) ::close(fd_);
}

uint64_t DirectReader::submit(void* dst, uint64_t offset, uint64_t length) {
  SF_CHECK(reinterpret_cast<uintptr_t>(dst) % kAlignment == 0, "DirectReader: destination not 4096-aligned");
  SF_CHECK(offset % kAlignment == 0 && length % kAlignment == 0,
           "DirectReader: offset %llu / length %llu not multiples of 4096", static_cast<unsigned long long>(offset),
           static_cast<unsigned long long>(length));
  const uint64_t ticket = queue_->add(static_cast<uint8_t*>(dst), offset, length, chunk_bytes_);
  if (length > 0) backend_->notify();
  return ticket;
}

Status DirectReader::wait(uint64_t ticket) { return queue_->wait(ticket); }
bool DirectReader::is_done(uint64_t ticket) const { return queue_->is_done(ticket); }

Status DirectReader::check_unmodified() const {
  struct stat st;
  if (fstat(fd_, &st) != 0) return Status::Errorf("%s: cannot stat: %s", path_.c_str(), std::strerror(errno));
  // (Block devices have no size in st_size; their size is from lseek at open.)
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) < file_size_)
    return Status::Errorf(
        "%s: the file is now %llu bytes but was %llu bytes when opened: it was truncated or "
        "rewritten while being read",
        path_.c_str(), static_cast<unsigned long long>(st.st_size), static_cast<unsigned long long>(file_size_));
  if (st.st_mtim.tv_sec == opened_mtime_.tv_sec && st.st_mtim.tv_nsec == opened_mtime_.tv_nsec) return Status::Ok();
  return Status::Errorf(
      "%s: the file was modified while being read (its modification time changed since it was opened): another "
      "program wrote into it, so the weights read from it cannot be trusted; restart once the file is complete",
      path_.c_str());
}

const char* DirectReader::backend_name() const { return backend_->name(); }
uint64_t DirectReader::bytes_read() const { return stepper_->bytes_read(); }
double DirectReader::busy_seconds() const { return busy_->seconds(); }

}  // namespace sf
