// PreadReadBackend: the fallback for systems where io_uring is unavailable. N threads each
// take a chunk and read it with blocking pread() calls; N reads are in flight at most.
// Internal to weights/.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "weights/read_backend.h"

namespace sf {

class PreadReadBackend : public ReadBackend {
 public:
  PreadReadBackend(const ReadContext& context, int n_threads);
  ~PreadReadBackend() override;

  void notify() override {}  // workers block in ReadQueue::wait_pop and wake by themselves
  const char* name() const override { return "pread"; }

 private:
  void worker();
  void read_chunk(ReadChunk chunk);

  ReadContext ctx_;
  std::vector<std::thread> threads_;
};

}  // namespace sf
