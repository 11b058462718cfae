#include "weights/read_queue.h"

#include <algorithm>

#include "base/check.h"

namespace sf {

uint64_t ReadQueue::add(uint8_t* dst, uint64_t offset, uint64_t length, uint64_t chunk_bytes) {
  SF_CHECK(chunk_bytes > 0);
  auto request = std::make_unique<ReadRequest>();
  std::lock_guard<std::mutex> lock(mu_);
  SF_CHECK(!closed_, "submit() on a DirectReader being destroyed");
  const uint64_t ticket = next_ticket_++;
  for (uint64_t done = 0; done < length; done += chunk_bytes) {
    ReadChunk c;
    c.request = request.get();
    c.dst = dst + done;
    c.offset = c.span_offset = offset + done;
    c.length = c.span_length = std::min(chunk_bytes, length - done);
    queued_.push_back(c);
    ++request->chunks_left;
  }
  request->done = request->chunks_left == 0;
  requests_.emplace(ticket, std::move(request));
  if (length > 0) work_cv_.notify_all();
  return ticket;
}

std::optional<ReadChunk> ReadQueue::try_pop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (queued_.empty()) return std::nullopt;
  ReadChunk c = queued_.front();
  queued_.pop_front();
  return c;
}

std::optional<ReadChunk> ReadQueue::wait_pop() {
  std::unique_lock<std::mutex> lock(mu_);
  work_cv_.wait(lock, [&] { return closed_ || !queued_.empty(); });
  if (queued_.empty()) return std::nullopt;
  ReadChunk c = queued_.front();
  queued_.pop_front();
  return c;
}

bool ReadQueue::has_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !queued_.empty();
}

void ReadQueue::finish_locked(ReadRequest& request, const Status& status) {
  if (!status.ok() && request.status.ok()) {
    request.status = status;
    request.failed.store(true, std::memory_order_relaxed);
  }
  SF_CHECK(request.chunks_left > 0);
  if (--request.chunks_left == 0) {
    request.done = true;
    done_cv_.notify_all();
  }
}

void ReadQueue::finish(const ReadChunk& chunk, const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  finish_locked(*chunk.request, status);
}

Status ReadQueue::wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = requests_.find(ticket);
  SF_CHECK(it != requests_.end(), "wait() on unknown or already-waited ticket %llu",
           static_cast<unsigned long long>(ticket));
  ReadRequest* request = it->second.get();
  done_cv_.wait(lock, [&] { return request->done; });
  Status status = request->status;
  requests_.erase(it);
  return status;
}

bool ReadQueue::is_done(uint64_t ticket) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = requests_.find(ticket);
  if (it != requests_.end()) return it->second->done;
  SF_CHECK(ticket > 0 && ticket < next_ticket_, "is_done() on a ticket never issued");
  return true;  // already waited
}

void ReadQueue::close(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  const Status cancelled = Status::Errorf("%s: read cancelled: reader closed", path.c_str());
  for (const ReadChunk& c : queued_) finish_locked(*c.request, cancelled);
  queued_.clear();
  work_cv_.notify_all();
}

}  // namespace sf
