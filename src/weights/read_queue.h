// ReadQueue: DirectReader's ticket bookkeeping, shared by both backends. A request is split
// into chunks; backends pop chunks, read them and report each chunk finished; when the
// last chunk of a request finishes, its waiters wake.
//
// Thread-safe (one mutex). Internal to weights/; DirectReader is the public interface.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "base/status.h"

namespace sf {

struct ReadRequest {
  size_t chunks_left = 0;  // guarded by the queue's mutex
  bool done = false;       // guarded
  Status status;           // first error; guarded
  // Read without the lock by backends, so the remaining chunks of a failed request are
  // skipped instead of read.
  std::atomic<bool> failed{false};
};

// A piece of a request. dst/offset/length advance as bytes arrive (short reads); the
// original span is kept for dropping cached pages once the chunk is done.
struct ReadChunk {
  ReadRequest* request = nullptr;  // valid until the chunk is finished
  uint8_t* dst = nullptr;
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes still to read
  uint64_t span_offset = 0;
  uint64_t span_length = 0;
  int retries = 0;  // consecutive EINTR/EAGAIN results
};

class ReadQueue {
 public:
  // Splits [offset, offset + length) into chunk_bytes pieces and queues them (FIFO, so a
  // layer submitted first is read first). Returns the ticket.
  uint64_t add(uint8_t* dst, uint64_t offset, uint64_t length, uint64_t chunk_bytes);

  std::optional<ReadChunk> try_pop();
  // Blocks until a chunk is queued; nullopt once the queue is closed.
  std::optional<ReadChunk> wait_pop();
  bool has_queued() const;

  // Reports a chunk finished; a failed status becomes the request's error if it is the first.
  void finish(const ReadChunk& chunk, const Status& status);

  Status wait(uint64_t ticket);
  bool is_done(uint64_t ticket) const;

  // Cancels every queued chunk (their requests fail with "reader closed") and wakes
  // wait_pop(). Chunks already popped are finished normally by their backend.
  void close(const std::string& path);

 private:
  void finish_locked(ReadRequest& request, const Status& status);

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // chunks queued or closed
  std::condition_variable done_cv_;  // some request completed
  std::deque<ReadChunk> queued_;
  std::unordered_map<uint64_t, std::unique_ptr<ReadRequest>> requests_;
  uint64_t next_ticket_ = 1;
  bool closed_ = false;
};

}  // namespace sf
