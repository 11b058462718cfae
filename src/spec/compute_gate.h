// ComputeGate: lends the cores to background draft work only while the target's forward
// pass waits for streamed weights, so verification always has priority (EdgeLLM III-D:
// provisional generation runs while verification loads parameters, never while it
// computes).
//
// The target's thread drives it: begin_pass() before a verification pass (closed), the
// streamer's stall callbacks open it during each wait for a unit and close it when the
// unit has arrived, end_pass() after the pass (open for good, so the worker can finish).
// The worker calls wait_open() before each unit of work (a draft layer: see
// gated_layer_source.h); it blocks on a condition variable, never spins.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

#include "weights/layer_streamer.h"

namespace sf {

class ComputeGate : public IoStallListener {
 public:
  void begin_pass();
  void end_pass();
  void on_stall_begin() override;
  void on_stall_end() override;
  // Blocks until the gate is open.
  void wait_open();
  // Seconds the gate was open inside passes (the target's I/O waits) since creation.
  double lent_seconds() const;
  // Seconds callers spent blocked in wait_open() since creation.
  double blocked_seconds() const;

 private:
  void set_open(bool open);  // with mutex_ held

  mutable std::mutex mutex_;
  std::condition_variable opened_;
  bool in_pass_ = false;
  bool open_ = true;
  double opened_at_ = 0;
  double lent_seconds_ = 0;
  double blocked_seconds_ = 0;
};

}  // namespace sf
