// LayerStreamer: a LayerSource that keeps the plan's pinned units in DRAM and streams the
// others from storage into a ring of buffers, every forward pass.
//
// Streamed units are read in forward order (layers ascending, then the head), cyclically:
// the ring always holds the next n_buffers units, so while layer l computes, layers l+1..
// are loading, and when a pass ends the first streamed layers of the next pass are already
// on their way (drafting and sampling between passes overlap with that I/O). Acquiring a
// unit out of that order (e.g. a pass that stops early) drains the ring and restarts it at
// the requested unit: correct, just slower.
//
// Bandwidth emulation (--io-bandwidth) makes each read complete no sooner than a device of
// that rate would (reads served one after another), so phone flash can be reproduced on a
// faster disk; reports label such numbers as emulated.
//
// Not thread-safe: one forward pass at a time (the I/O itself runs on the reader's thread).
#pragma once

#include <memory>
#include <vector>

#include "base/aligned_buffer.h"
#include "model/layer_source.h"
#include "weights/direct_reader.h"
#include "weights/residency_plan.h"
#include "weights/unit_span.h"

namespace sf {

// Told when the forward pass starts and stops waiting for a streamed unit (on the pass's
// thread). EdgeLLM's provisional generation lends the idle cores to the draft worker for
// exactly that time (spec/compute_gate.h).
class IoStallListener {
 public:
  virtual ~IoStallListener() = default;
  virtual void on_stall_begin() = 0;
  virtual void on_stall_end() = 0;
};

struct StreamerOptions {
  double emulated_bandwidth = 0;  // bytes/s; 0 = the real device's speed
  DirectReaderOptions io;
};

struct StreamStats {
  uint64_t bytes_read = 0;  // bytes read from storage for streamed units
  uint64_t units_read = 0;
  double io_seconds = 0;  // device busy time (emulated: bytes / emulated rate)
  // The real device's busy time, emulated or not: under emulation, a device slower than the
  // emulated rate (device_seconds > io_seconds) sets the pace, and the rows must say so.
  double device_seconds = 0;
  double io_stall_seconds = 0;  // time the forward pass waited for a unit to arrive
  uint64_t restarts = 0;        // out-of-order acquisitions that restarted the ring
};

class LayerStreamer : public LayerSource {
 public:
  static Result<std::unique_ptr<LayerStreamer>> create(const ModelWeights& weights, const ResidencyPlan& plan,
                                                       const StreamerOptions& options);
  ~LayerStreamer() override;

  Result<const LayerWeights*> acquire_layer(int layer) override;
  void release_layer(int layer) override;
  Result<const WeightMatrix*> acquire_output() override;
  void release_output() override;

  StreamStats stats() const;
  // Seconds until the reads submitted so far complete: between two passes, the I/O of the
  // next pass's first streamed units that is still to come. Work done now (drafting) up to
  // this long overlaps that I/O instead of adding to the cycle. Emulated storage: the
  // emulated device's queue (exact); the real device (and under emulation, whichever is
  // later): the reads not completed yet, served one after another at the rate the device
  // delivered so far (0 before anything was read). Only unfinished reads count, so the
  // estimate can never run ahead of the device for good.
  double pending_io_seconds() const;
  const char* backend_name() const { return reader_->backend_name(); }
  bool direct_io() const { return reader_->direct(); }
  bool emulated() const { return options_.emulated_bandwidth > 0; }
  double emulated_bandwidth() const { return options_.emulated_bandwidth; }
  // Until reset to nullptr, every wait for a unit is reported to `listener`.
  void set_stall_listener(IoStallListener* listener) { stall_listener_ = listener; }

 private:
  struct Slot {
    AlignedBuffer buffer;
    uint64_t ticket = 0;
    int64_t sequence = -1;      // position in the cyclic unit sequence it holds or loads
    double emulated_ready = 0;  // when an emulated device would have finished the read
    bool in_flight = false;
    LayerWeights layer;  // views into buffer, for a layer unit
    WeightMatrix head;   // view into buffer, for the head unit
  };

  LayerStreamer(const ModelWeights& w, const StreamerOptions& o) : weights_(w), options_(o) {}
  int unit_at(int64_t sequence) const { return order_[sequence % static_cast<int64_t>(order_.size())]; }
  void submit(int64_t sequence);
  Status acquire_unit(int unit, Slot** slot);
  void release_unit(int unit);
  Status restart_at(int unit);
  Status drain();

  const ModelWeights& weights_;
  StreamerOptions options_;
  std::unique_ptr<DirectReader> reader_;
  std::vector<int> order_;        // streamed units in forward order
  std::vector<int> order_index_;  // unit -> index in order_, -1 if resident
  std::vector<UnitSpan> spans_;   // per unit
  std::vector<Slot> slots_;
  int64_t next_acquire_ = 0;  // sequence number the pass will acquire next
  int64_t next_submit_ = 0;
  double emulated_free_at_ = 0;
  StreamStats stats_;
  bool unit_held_ = false;
  IoStallListener* stall_listener_ = nullptr;
};

}  // namespace sf
