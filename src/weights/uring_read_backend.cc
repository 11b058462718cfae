#include "weights/uring_read_backend.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"

namespace sf {
namespace {
constexpr uint64_t kWakeTag = 0;
}  // namespace

UringReadBackend::UringReadBackend(const ReadContext& context, int queue_depth)
    : ctx_(context), slots_(static_cast<size_t>(queue_depth)) {
  for (size_t i = slots_.size(); i-- > 0;) free_.push_back(i);
}

Result<std::unique_ptr<UringReadBackend>> UringReadBackend::create(const ReadContext& context, int queue_depth) {
  std::unique_ptr<UringReadBackend> b(new UringReadBackend(context, queue_depth));
  // One extra entry for the wake-up poll, so the reads and the poll always fit together.
  const int r = io_uring_queue_init(static_cast<unsigned>(queue_depth + 1), &b->ring_, 0);
  if (r < 0) return Status::Errorf("io_uring_queue_init failed: %s", std::strerror(-r));
  b->ring_ready_ = true;
  io_uring_probe* probe = io_uring_get_probe_ring(&b->ring_);
  if (probe == nullptr) return Status::Error("io_uring opcode probe failed (kernel too old?)");
  const bool supported = io_uring_opcode_supported(probe, IORING_OP_READ) &&
                         io_uring_opcode_supported(probe, IORING_OP_POLL_ADD) &&
                         io_uring_opcode_supported(probe, IORING_OP_NOP);
  io_uring_free_probe(probe);
  if (!supported) return Status::Error("io_uring lacks IORING_OP_READ or POLL_ADD (kernel older than 5.6)");
  b->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (b->wake_fd_ < 0) return Status::Errorf("eventfd failed: %s", std::strerror(errno));
  b->thread_ = std::thread([p = b.get()] { p->run(); });
  return b;
}

UringReadBackend::~UringReadBackend() {
  if (thread_.joinable()) {
    stop_.store(true);
    notify();
    thread_.join();
  }
  // The ring's last request is the wake-up poll, which owns no buffer: tearing the ring down
  // cancels it harmlessly.
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void UringReadBackend::notify() {
  const uint64_t one = 1;
  // Can only fail with EAGAIN when the counter is saturated, which already means "wake up".
  (void)!::write(wake_fd_, &one, sizeof(one));
}

bool UringReadBackend::arm_wakeup() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) return false;
  io_uring_prep_poll_add(sqe, wake_fd_, POLLIN);
  io_uring_sqe_set_data64(sqe, kWakeTag);
  return true;
}

void UringReadBackend::issue_reads() {
  while (!free_.empty()) {
    ReadChunk chunk;
    if (!retry_.empty()) {
      chunk = retry_.front();
      retry_.pop_front();
    } else if (std::optional<ReadChunk> popped = ctx_.queue->try_pop()) {
      chunk = *popped;
    } else {
      return;
    }
    if (chunk.request->failed.load(std::memory_order_relaxed)) {
      ctx_.queue->finish(chunk, Status::Ok());  // the request already failed; skip the I/O
      continue;
    }
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {  // cannot happen with the ring sized for all slots; stay safe
      retry_.push_front(chunk);
      return;
    }
    const size_t index = free_.back();
    free_.pop_back();
    Slot& slot = slots_[index];
    slot.chunk = chunk;
    slot.plan = ctx_.stepper->plan(chunk);
    if (slot.plan.injected_errno != 0) {
      // A NOP carries the injected failure through the real completion path.
      io_uring_prep_nop(sqe);
    } else {
      ctx_.busy->begin();
      io_uring_prep_read(sqe, ctx_.fd, chunk.dst, static_cast<unsigned>(slot.plan.length), chunk.offset);
    }
    io_uring_sqe_set_data64(sqe, index + 1);
  }
}

void UringReadBackend::complete(const io_uring_cqe* cqe, bool* wake_armed) {
  const uint64_t tag = io_uring_cqe_get_data64(cqe);
  if (tag == kWakeTag) {
    uint64_t count;
    (void)!::read(wake_fd_, &count, sizeof(count));  // reset the eventfd before re-arming
    *wake_armed = false;
    return;
  }
  const size_t index = tag - 1;
  SF_CHECK(index < slots_.size());
  Slot& slot = slots_[index];
  int64_t result = cqe->res;
  if (slot.plan.injected_errno != 0) {
    result = -slot.plan.injected_errno;
  } else {
    ctx_.busy->end();
  }
  Status error;
  switch (ctx_.stepper->apply(slot.chunk, slot.plan, result, &error)) {
    case ReadStepper::Next::kRetry:
      retry_.push_back(slot.chunk);
      break;
    case ReadStepper::Next::kDone:
      ctx_.queue->finish(slot.chunk, Status::Ok());
      break;
    case ReadStepper::Next::kFailed:
      ctx_.queue->finish(slot.chunk, error);
      break;
  }
  free_.push_back(index);
}

void UringReadBackend::run() {
  bool wake_armed = false;
  while (true) {
    issue_reads();
    // Stop only when no read can still write into a caller's buffer.
    if (stop_.load() && free_.size() == slots_.size() && retry_.empty()) break;
    if (!wake_armed) wake_armed = arm_wakeup();
    // One syscall submits the new reads and sleeps until something completes.
    const int r = io_uring_submit_and_wait(&ring_, 1);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
      SF_CHECK(false, "io_uring_submit_and_wait failed: %s", std::strerror(-r));
    }
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      complete(cqe, &wake_armed);
      ++seen;
    }
    io_uring_cq_advance(&ring_, seen);
    // EAGAIN/EBUSY with nothing to reap means the kernel is short of resources; back off
    // briefly instead of spinning.
    if ((r == -EAGAIN || r == -EBUSY) && seen == 0) usleep(1000);
  }
}

}  // namespace sf
