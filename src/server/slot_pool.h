// SlotPool: shares one Session (one loaded model, one memory budget, n slots) between the
// server's request threads.
//
// Design. The Session allocates every slot's KV cache at start-up, inside the budget, so
// a request never allocates engine memory: it only needs a free slot. acquire() hands one
// out (the free slot whose prefix cache shares the most tokens with the prompt, so a
// follow-up chat turn lands where its history is cached), queueing requests first-come
// first-served; when max_queue requests already wait, or the wait exceeds queue_timeout,
// it fails and the server answers 503 — the process never grows past the budget.
//
// Forward passes cannot run concurrently (the layer streamer and the thread pool serve
// one pass at a time), so generate() holds a FIFO "engine turn" lock while the engine
// works and gives it up around every on_token callback, when no pass is in flight. With
// several active slots that interleaves them at token granularity (one decoding step, or
// one speculative cycle, each), round-robin; and a slow client writing its tokens never
// blocks the others.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/session.h"
#include "server/api_error.h"

namespace sf::server {

// A fair (first-come first-served) mutual-exclusion lock: a thread that unlocks and locks
// again queues behind every thread already waiting.
class TurnLock {
 public:
  void lock();
  void unlock();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0;
  uint64_t serving_ = 0;
};

class SlotPool {
 public:
  SlotPool(Session& session, int max_queue, double queue_timeout_seconds);

  // A slot held by one request; returns it to the pool when destroyed.
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    int slot() const { return slot_; }

   private:
    friend class SlotPool;
    Lease(SlotPool& pool, int slot) : pool_(pool), slot_(slot) {}
    SlotPool& pool_;
    int slot_;
  };

  // Waits for a free slot; on a full queue or a timeout, a 503 ApiError in *error.
  std::unique_ptr<Lease> acquire(const std::vector<int32_t>& prompt, ApiError* error);

  // Session::generate in the lease's slot, interleaved with the other slots (see above).
  Result<GenerationStats> generate(const Lease& lease, const std::vector<int32_t>& prompt, int n_predict,
                                   const SamplingParams& sampling, const SpecOverride& spec,
                                   const std::function<bool(int32_t, const std::string&)>& on_token);

  // Runs fn while no forward pass is in flight (to read the shared streamer's counters).
  void with_engine(const std::function<void(const Session&)>& fn);

  int n_slots() const { return static_cast<int>(busy_.size()); }
  int queue_depth() const;
  // Requests that had to wait for a slot since start-up (a counter: a sampled queue depth
  // misses short waits).
  uint64_t queued_total() const;
  int busy_slots() const;
  // Wall time during which at least one slot was busy (for aggregate tokens/s).
  double busy_seconds() const;

 private:
  void release(int slot);
  int pick_slot_locked(const std::vector<int32_t>& prompt) const;

  Session& session_;
  const int max_queue_;
  const double queue_timeout_seconds_;
  TurnLock engine_turn_;

  mutable std::mutex mutex_;
  std::condition_variable slot_freed_;
  std::vector<bool> busy_;
  std::deque<uint64_t> waiting_;  // tickets of queued requests, oldest first
  uint64_t next_ticket_ = 0;
  uint64_t queued_total_ = 0;
  int n_busy_ = 0;
  double busy_seconds_ = 0;
  double busy_since_ = 0;  // monotonic seconds when n_busy_ went from 0 to 1
};

}  // namespace sf::server
