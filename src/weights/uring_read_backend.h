// UringReadBackend: one I/O thread owns an io_uring and keeps up to queue_depth chunk reads
// in flight, which is what it takes to reach an NVMe drive's bandwidth from one process.
// Submitters never touch the ring (its submission queue is single-producer); they queue
// chunks in the ReadQueue and write an eventfd that the ring polls, which wakes the thread
// even while it sleeps waiting for completions. Internal to weights/.
#pragma once

#include <liburing.h>

#include <atomic>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "base/status.h"
#include "weights/read_backend.h"

namespace sf {

class UringReadBackend : public ReadBackend {
 public:
  // Fails (so DirectReader can fall back to pread) when the kernel or a seccomp policy
  // refuses io_uring, or lacks the READ/POLL_ADD/NOP operations.
  static Result<std::unique_ptr<UringReadBackend>> create(const ReadContext& context, int queue_depth);
  ~UringReadBackend() override;

  void notify() override;
  const char* name() const override { return "io_uring"; }

 private:
  struct Slot {
    ReadChunk chunk;
    ReadPlan plan;
  };

  UringReadBackend(const ReadContext& context, int queue_depth);
  void run();
  bool arm_wakeup();
  void issue_reads();
  void complete(const io_uring_cqe* cqe, bool* wake_armed);

  ReadContext ctx_;
  io_uring ring_{};
  bool ring_ready_ = false;
  int wake_fd_ = -1;
  std::vector<Slot> slots_;      // user_data = slot index + 1; 0 is the wake-up poll
  std::vector<size_t> free_;     // free slot indices
  std::deque<ReadChunk> retry_;  // short or interrupted reads to issue again, before new chunks
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sf
