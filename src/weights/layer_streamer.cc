#include "weights/layer_streamer.h"

#include <chrono>
#include <thread>

#include "base/check.h"
#include "base/timer.h"
#include "quant/row_panels.h"

namespace sf {

Result<std::unique_ptr<LayerStreamer>> LayerStreamer::create(const ModelWeights& w, const ResidencyPlan& plan,
                                                             const StreamerOptions& options) {
  std::unique_ptr<LayerStreamer> s(new LayerStreamer(w, options));
  SF_ASSIGN_OR_RETURN(s->reader_, DirectReader::open(w.file().path(), options.io));
  s->order_index_.assign(w.n_units(), -1);
  s->spans_.resize(w.n_units());
  for (int u = 0; u < w.n_units(); ++u) {
    if (plan.resident[u]) continue;
    s->order_index_[u] = static_cast<int>(s->order_.size());
    s->order_.push_back(u);
    s->spans_[u] = unit_span(w, u);
  }
  SF_CHECK(!s->order_.empty(), "a streamer needs at least one streamed unit");
  // More buffers than streamed units would only hold duplicates of the same unit.
  const int n_slots = std::min<int>(plan.n_buffers, static_cast<int>(s->order_.size()));
  SF_CHECK(n_slots >= 1);
  s->slots_.resize(n_slots);
  // Huge pages: O_DIRECT reads into 4 KiB pages delivered a third of the device's rate here
  // (aligned_buffer.h). The plan counts the rounding up to whole huge pages.
  for (Slot& slot : s->slots_) slot.buffer.allocate_huge(plan.buffer_bytes, kStreamAlignment);
  for (int i = 0; i < n_slots; ++i) s->submit(s->next_submit_++);
  return s;
}

LayerStreamer::~LayerStreamer() { (void)drain(); }

void LayerStreamer::submit(int64_t sequence) {
  Slot& slot = slots_[sequence % static_cast<int64_t>(slots_.size())];
  SF_CHECK(!slot.in_flight);
  const int unit = unit_at(sequence);
  const UnitSpan& span = spans_[unit];
  slot.sequence = sequence;
  slot.ticket = reader_->submit(slot.buffer.data(), span.begin, span.size());
  slot.in_flight = true;
  const double now = now_seconds();
  if (options_.emulated_bandwidth > 0) {
    // A device of the emulated rate serves reads one after another.
    const double start = std::max(now, emulated_free_at_);
    slot.emulated_ready = start + static_cast<double>(span.size()) / options_.emulated_bandwidth;
    emulated_free_at_ = slot.emulated_ready;
    stats_.io_seconds += static_cast<double>(span.size()) / options_.emulated_bandwidth;
  }
  stats_.bytes_read += span.size();
  ++stats_.units_read;
}

Status LayerStreamer::drain() {
  Status first;
  for (Slot& slot : slots_) {
    if (!slot.in_flight) continue;
    Status st = reader_->wait(slot.ticket);
    slot.in_flight = false;
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

Status LayerStreamer::restart_at(int unit) {
  ++stats_.restarts;
  SF_RETURN_IF_ERROR(drain());
  // Continue the sequence numbering from the requested unit's next occurrence.
  const int64_t m = static_cast<int64_t>(order_.size());
  int64_t seq = next_acquire_;
  while (unit_at(seq) != unit) ++seq;
  SF_CHECK(seq < next_acquire_ + m);
  next_acquire_ = next_submit_ = seq;
  for (size_t i = 0; i < slots_.size(); ++i) submit(next_submit_++);
  return Status::Ok();
}

Status LayerStreamer::acquire_unit(int unit, Slot** out) {
  SF_CHECK(!unit_held_, "streamed units must be released before the next is acquired");
  if (unit_at(next_acquire_) != unit) SF_RETURN_IF_ERROR(restart_at(unit));
  Slot& slot = slots_[next_acquire_ % static_cast<int64_t>(slots_.size())];
  SF_CHECK(slot.sequence == next_acquire_ && slot.in_flight);
  const double wait_start = now_seconds();
  // Only a real wait is lent out: a unit that has arrived (and whose emulated transfer is
  // over) is used at once.
  const bool stalls = stall_listener_ && (!reader_->is_done(slot.ticket) ||
                                          (options_.emulated_bandwidth > 0 && slot.emulated_ready > wait_start));
  if (stalls) stall_listener_->on_stall_begin();
  Status st = reader_->wait(slot.ticket);
  // A write into the file during or before this read would hand out mixed weights.
  if (st.ok()) st = reader_->check_unmodified();
  slot.in_flight = false;
  if (options_.emulated_bandwidth > 0) {
    const double remaining = slot.emulated_ready - now_seconds();
    if (remaining > 0) std::this_thread::sleep_for(std::chrono::duration<double>(remaining));
  }
  if (stalls) stall_listener_->on_stall_end();
  stats_.io_stall_seconds += now_seconds() - wait_start;
  if (!st.ok()) {
    // Keep the ring consistent so a later pass can retry: resubmit this slot's read.
    submit(next_acquire_);
    return st.with_context("streaming weights");
  }
  unit_held_ = true;
  *out = &slot;
  return Status::Ok();
}

void LayerStreamer::release_unit(int unit) {
  SF_CHECK(unit_held_ && unit_at(next_acquire_) == unit);
  unit_held_ = false;
  ++next_acquire_;
  submit(next_submit_++);  // into the slot just freed
}

// Points a copy of the unit's matrix views at the slot's buffer. A matrix the file stores as
// row panels but this CPU runs as rows (no panel kernel here) is converted in the buffer,
// which the next read of the slot overwrites anyway.
static void bind_views(const ModelWeights& weights, int unit, std::vector<WeightMatrix*> views, uint64_t span_begin,
                       uint8_t* buffer) {
  const auto& tensors = weights.unit_tensors(unit);
  const auto& stored = weights.unit_stored_layouts(unit);
  for (size_t i = 0; i < tensors.size(); ++i) {
    uint8_t* data = buffer + (tensors[i]->file_offset - span_begin);
    views[i]->data = data;
    if (stored[i] == WeightLayout::kRowPanels && views[i]->layout == WeightLayout::kRows)
      unpack_row_panels(views[i]->type, data, views[i]->rows, views[i]->cols);
  }
}

Result<const LayerWeights*> LayerStreamer::acquire_layer(int layer) {
  if (order_index_[layer] < 0) return &weights_.layers[layer];
  Slot* slot = nullptr;
  SF_RETURN_IF_ERROR(acquire_unit(layer, &slot));
  slot->layer = weights_.layers[layer];  // norms, biases and shapes; matrices re-pointed below
  LayerWeights& L = slot->layer;
  bind_views(weights_, layer, {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down}, spans_[layer].begin,
             slot->buffer.data());
  return &slot->layer;
}

void LayerStreamer::release_layer(int layer) {
  if (order_index_[layer] >= 0) release_unit(layer);
}

Result<const WeightMatrix*> LayerStreamer::acquire_output() {
  const int head = weights_.head_unit();
  if (order_index_[head] < 0) return &weights_.output;
  Slot* slot = nullptr;
  SF_RETURN_IF_ERROR(acquire_unit(head, &slot));
  slot->head = weights_.output;
  bind_views(weights_, head, {&slot->head}, spans_[head].begin, slot->buffer.data());
  return &slot->head;
}

void LayerStreamer::release_output() {
  const int head = weights_.head_unit();
  if (order_index_[head] >= 0) release_unit(head);
}

StreamStats LayerStreamer::stats() const {
  StreamStats s = stats_;
  s.device_seconds = reader_->busy_seconds();
  if (options_.emulated_bandwidth <= 0) s.io_seconds = s.device_seconds;
  return s;
}

double LayerStreamer::pending_io_seconds() const {
  // The real device: the reads still running. (A serial model of every submission at the
  // average rate, corrected by nothing, drifted ahead of the device on this machine by
  // several milliseconds within a few dozen passes, and made all drafting look hidden.)
  double real = 0;
  const double busy = reader_->busy_seconds();
  const uint64_t done_bytes = reader_->bytes_read();
  if (busy > 0 && done_bytes > 0) {
    uint64_t unfinished = 0;
    for (const Slot& slot : slots_)
      if (slot.in_flight && !reader_->is_done(slot.ticket)) unfinished += spans_[unit_at(slot.sequence)].size();
    real = static_cast<double>(unfinished) * busy / static_cast<double>(done_bytes);
  }
  const double emulated = options_.emulated_bandwidth > 0 ? emulated_free_at_ - now_seconds() : 0;
  return std::max({0.0, real, emulated});
}

}  // namespace sf
