#include "server/slot_pool.h"

#include <algorithm>
#include <chrono>

namespace sf::server {

namespace {
double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

void TurnLock::lock() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t ticket = next_ticket_++;
  cv_.wait(lock, [&] { return serving_ == ticket; });
}

void TurnLock::unlock() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++serving_;
  }
  cv_.notify_all();
}

SlotPool::SlotPool(Session& session, int max_queue, double queue_timeout_seconds)
    : session_(session),
      max_queue_(max_queue),
      queue_timeout_seconds_(queue_timeout_seconds),
      busy_(static_cast<size_t>(session.n_slots()), false) {}

SlotPool::Lease::~Lease() { pool_.release(slot_); }

int SlotPool::pick_slot_locked(const std::vector<int32_t>& prompt) const {
  int best = -1;
  size_t best_common = 0;
  for (int s = 0; s < n_slots(); ++s) {
    if (busy_[static_cast<size_t>(s)]) continue;
    // A free slot's cache is not being written (only its lease holder runs it).
    const std::vector<int32_t>& cached = session_.cached_tokens(s);
    size_t common = 0;
    while (common < cached.size() && common < prompt.size() && cached[common] == prompt[common]) ++common;
    if (best < 0 || common > best_common) {
      best = s;
      best_common = common;
    }
  }
  return best;
}

std::unique_ptr<SlotPool::Lease> SlotPool::acquire(const std::vector<int32_t>& prompt, ApiError* error) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (waiting_.empty() && n_busy_ < n_slots()) {
    // Nobody queued ahead: take a slot now.
  } else if (static_cast<int>(waiting_.size()) >= max_queue_) {
    *error = ApiError::overloaded("all " + std::to_string(n_slots()) + " slots are busy and " +
                                  std::to_string(waiting_.size()) + " requests are queued; retry later");
    return nullptr;
  } else {
    const uint64_t ticket = next_ticket_++;
    waiting_.push_back(ticket);
    ++queued_total_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(queue_timeout_seconds_);
    const bool ready =
        slot_freed_.wait_until(lock, deadline, [&] { return waiting_.front() == ticket && n_busy_ < n_slots(); });
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), ticket));
    // Whoever is now at the front may be able to go.
    slot_freed_.notify_all();
    if (!ready) {
      *error = ApiError::overloaded("no slot became free within " + std::to_string(queue_timeout_seconds_) +
                                    " s; retry later");
      return nullptr;
    }
  }
  const int slot = pick_slot_locked(prompt);
  busy_[static_cast<size_t>(slot)] = true;
  if (n_busy_++ == 0) busy_since_ = monotonic_seconds();
  return std::unique_ptr<Lease>(new Lease(*this, slot));
}

void SlotPool::release(int slot) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_[static_cast<size_t>(slot)] = false;
    if (--n_busy_ == 0) busy_seconds_ += monotonic_seconds() - busy_since_;
  }
  slot_freed_.notify_all();
}

Result<GenerationStats> SlotPool::generate(const Lease& lease, const std::vector<int32_t>& prompt, int n_predict,
                                           const SamplingParams& sampling, const SpecOverride& spec,
                                           const std::function<bool(int32_t, const std::string&)>& on_token) {
  engine_turn_.lock();
  auto result = session_.generate(lease.slot(), prompt, n_predict, sampling, /*ignore_eos=*/false, spec,
                                  [&](int32_t id, const std::string& text) {
                                    // No pass is in flight here: let the other slots step.
                                    engine_turn_.unlock();
                                    const bool more = on_token(id, text);
                                    engine_turn_.lock();
                                    return more;
                                  });
  engine_turn_.unlock();
  return result;
}

void SlotPool::with_engine(const std::function<void(const Session&)>& fn) {
  engine_turn_.lock();
  fn(session_);
  engine_turn_.unlock();
}

int SlotPool::queue_depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(waiting_.size());
}

uint64_t SlotPool::queued_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_total_;
}

int SlotPool::busy_slots() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return n_busy_;
}

double SlotPool::busy_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_seconds_ + (n_busy_ > 0 ? monotonic_seconds() - busy_since_ : 0.0);
}

}  // namespace sf::server
