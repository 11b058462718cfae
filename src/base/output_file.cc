#include "base/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

namespace sf {
namespace {

std::mutex g_fault_mutex;
std::optional<WriteFault> g_fault;

// A FILE whose writes go to a real file until the fault's byte limit, then fail with the
// fault's errno (the bytes before the limit are written, as a full disk would).
struct FaultyFile {
  int fd = -1;
  uint64_t written = 0;
  WriteFault fault;
};

ssize_t faulty_write(void* cookie, const char* buf, size_t size) {
  auto* f = static_cast<FaultyFile*>(cookie);
  size_t allowed = size;
  if (f->written >= f->fault.fail_after_bytes)
    allowed = 0;
  else if (f->fault.fail_after_bytes - f->written < size)
    allowed = static_cast<size_t>(f->fault.fail_after_bytes - f->written);
  size_t done = 0;
  while (done < allowed) {
    const ssize_t n = ::write(f->fd, buf + done, allowed - done);
    if (n < 0) return -1;
    done += static_cast<size_t>(n);
  }
  f->written += done;
  if (done < size) {
    // The bytes that fit are on disk, then the error: a full disk. (Returning the short
    // count instead would make stdio fail without setting errno.)
    errno = f->fault.error;
    return -1;
  }
  return static_cast<ssize_t>(done);
}

int faulty_close(void* cookie) {
  auto* f = static_cast<FaultyFile*>(cookie);
  const int rc = ::close(f->fd);
  const bool fail = f->fault.fail_on_close;
  const int error = f->fault.error;
  delete f;
  if (fail) {
    errno = error;
    return -1;
  }
  return rc;
}

}  // namespace

FILE* open_output_file(const std::string& path) {
  std::optional<WriteFault> fault;
  {
    std::lock_guard<std::mutex> lock(g_fault_mutex);
    fault = g_fault;
  }
  if (!fault) return std::fopen(path.c_str(), "wb");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  auto* cookie = new FaultyFile{fd, 0, *fault};
  cookie_io_functions_t io{};
  io.write = faulty_write;
  io.close = faulty_close;
  FILE* f = fopencookie(cookie, "wb", io);
  if (f == nullptr) {
    ::close(fd);
    delete cookie;
  }
  return f;
}

Status commit_output_file(FILE* f, bool write_ok, int write_errno, const std::string& tmp_path,
                          const std::string& final_path, Durability durability) {
  int err = write_ok ? 0 : (write_errno != 0 ? write_errno : EIO);
  if (std::fflush(f) != 0 && err == 0) err = errno;
  // fileno is -1 for a test fault's FILE; its data went through write(2) already.
  const int fd = ::fileno(f);
  if (err == 0 && fd >= 0 && durability == Durability::kSynced && ::fsync(fd) != 0 && errno != EINVAL) err = errno;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  std::error_code ec;
  if (err != 0) {
    std::filesystem::remove(tmp_path, ec);
    return Status::Errorf("%s: write failed: %s (nothing was written; any previous file is unchanged)",
                          final_path.c_str(), std::strerror(err));
  }
  std::filesystem::rename(tmp_path, final_path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp_path, ignored);
    return Status::Errorf("%s: cannot rename from %s: %s", final_path.c_str(), tmp_path.c_str(), ec.message().c_str());
  }
  return Status::Ok();
}

void abandon_output_file(FILE* f, const std::string& tmp_path) {
  if (f != nullptr) std::fclose(f);
  std::error_code ec;
  std::filesystem::remove(tmp_path, ec);
}

ScopedWriteFault::ScopedWriteFault(const WriteFault& fault) {
  std::lock_guard<std::mutex> lock(g_fault_mutex);
  g_fault = fault;
}

ScopedWriteFault::~ScopedWriteFault() {
  std::lock_guard<std::mutex> lock(g_fault_mutex);
  g_fault.reset();
}

}  // namespace sf
