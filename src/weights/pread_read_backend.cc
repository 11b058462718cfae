#include "weights/pread_read_backend.h"

#include <unistd.h>

#include <cerrno>

namespace sf {

PreadReadBackend::PreadReadBackend(const ReadContext& context, int n_threads) : ctx_(context) {
  for (int i = 0; i < n_threads; ++i) threads_.emplace_back([this] { worker(); });
}

PreadReadBackend::~PreadReadBackend() {
  // The owner closed the queue: wait_pop() returns nullopt once each worker has finished
  // the chunk it holds.
  for (std::thread& t : threads_) t.join();
}

void PreadReadBackend::worker() {
  while (std::optional<ReadChunk> chunk = ctx_.queue->wait_pop()) read_chunk(*chunk);
}

void PreadReadBackend::read_chunk(ReadChunk chunk) {
  if (chunk.request->failed.load(std::memory_order_relaxed)) {
    ctx_.queue->finish(chunk, Status::Ok());  // the request already failed; skip the I/O
    return;
  }
  while (true) {
    const ReadPlan plan = ctx_.stepper->plan(chunk);
    int64_t result;
    if (plan.injected_errno != 0) {
      result = -plan.injected_errno;
    } else {
      ctx_.busy->begin();
      const ssize_t got = ::pread(ctx_.fd, chunk.dst, plan.length, static_cast<off_t>(chunk.offset));
      result = got >= 0 ? got : -errno;
      ctx_.busy->end();
    }
    Status error;
    switch (ctx_.stepper->apply(chunk, plan, result, &error)) {
      case ReadStepper::Next::kRetry:
        continue;
      case ReadStepper::Next::kDone:
        ctx_.queue->finish(chunk, Status::Ok());
        return;
      case ReadStepper::Next::kFailed:
        ctx_.queue->finish(chunk, error);
        return;
    }
  }
}

}  // namespace sf
