#include "spec/compute_gate.h"

#include "base/timer.h"

namespace sf {

void ComputeGate::set_open(bool open) {
  if (open == open_) return;
  open_ = open;
  if (in_pass_) {
    if (open)
      opened_at_ = now_seconds();
    else
      lent_seconds_ += now_seconds() - opened_at_;
  }
  if (open) opened_.notify_all();
}

void ComputeGate::begin_pass() {
  std::lock_guard<std::mutex> lock(mutex_);
  in_pass_ = true;
  open_ = false;
}

void ComputeGate::end_pass() {
  std::lock_guard<std::mutex> lock(mutex_);
  set_open(true);
  in_pass_ = false;
}

void ComputeGate::on_stall_begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (in_pass_) set_open(true);
}

void ComputeGate::on_stall_end() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (in_pass_) set_open(false);
}

void ComputeGate::wait_open() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (open_) return;
  const double start = now_seconds();
  opened_.wait(lock, [&] { return open_; });
  blocked_seconds_ += now_seconds() - start;
}

double ComputeGate::blocked_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocked_seconds_;
}

double ComputeGate::lent_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lent_seconds_ + (in_pass_ && open_ ? now_seconds() - opened_at_ : 0);
}

}  // namespace sf
