// ReadBackend: the part of DirectReader that performs reads (io_uring or pread threads).
// A backend pops chunks from the ReadQueue, reads each through the ReadStepper until it is
// done or failed, and reports it finished. Internal to weights/.
#pragma once

#include <string>

#include "weights/busy_clock.h"
#include "weights/read_queue.h"
#include "weights/read_stepper.h"

namespace sf {

// What a backend works on; owned by DirectReader, which outlives the backend.
struct ReadContext {
  int fd = -1;
  std::string path;
  ReadQueue* queue = nullptr;
  ReadStepper* stepper = nullptr;
  BusyClock* busy = nullptr;
};

class ReadBackend {
 public:
  // Destruction finishes the chunks the backend already popped and joins its threads; the
  // owner closes the queue first so that nothing new is popped.
  virtual ~ReadBackend() = default;
  // New chunks were queued (called after ReadQueue::add).
  virtual void notify() = 0;
  virtual const char* name() const = 0;
};

}  // namespace sf
