// ResidencyPlan: which weight units stay in DRAM and which are streamed from storage on
// every forward pass, and the memory this costs, under a MemoryBudget.
//
// The plan pins a prefix of layers (self-speculation needs the shallow layers resident)
// and the LM head (always at a share budget; within a byte budget when it fits, or when
// required); everything else streams through a ring of n_buffers
// buffers, each large enough for the largest streamed unit. The footprint it accounts:
//   base (token embeddings, norms) + pinned units + stream buffers + KV cache + scratch.
// A budget below the smallest possible footprint is an error that names that minimum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/model_weights.h"
#include "weights/memory_budget.h"

namespace sf {

struct ResidencyPlan {
  std::vector<bool> resident;  // per unit (layers, then the head)
  int n_resident_layers = 0;
  bool head_resident = false;
  int n_buffers = 0;
  uint64_t buffer_bytes = 0;  // each
  uint64_t base_bytes = 0;
  uint64_t resident_unit_bytes = 0;
  uint64_t kv_bytes = 0;
  uint64_t scratch_bytes = 0;
  uint64_t budget_bytes = 0;             // 0 = unlimited
  uint64_t streamed_bytes_per_pass = 0;  // bytes read from storage per forward pass

  uint64_t footprint_bytes() const {
    return base_bytes + resident_unit_bytes + static_cast<uint64_t>(n_buffers) * buffer_bytes + kv_bytes +
           scratch_bytes;
  }
  bool streams() const { return streamed_bytes_per_pass > 0; }
  std::string describe() const;  // one line for logs and --stats
};

// kv_bytes and scratch_bytes: what the session will allocate besides weights.
// require_head: the LM head must be resident (early-exit scoring reads it mid-pass). A share
// budget pins it for every method, on top of the share of the layers, like the embeddings
// (so every method streams the same bytes at the same share); with a byte budget it counts
// in the footprint as always.
Result<ResidencyPlan> plan_residency(const ModelWeights& w, uint64_t kv_bytes, uint64_t scratch_bytes,
                                     const MemoryBudget& budget, int n_buffers = 2, bool require_head = false);

// Self-speculation (CATS, Kangaroo) has no separate draft model, so at a share budget it is
// held to the footprint the target alone takes at that share: the LM head it must pin and
// its adapters (`extra_bytes`) come out of the layers it pins. Where even its smallest plan
// is larger than that (a 0% share: nothing of the target is pinned), the share's plan is
// used with the head and the adapters on top, and `*on_top` says so. Other budgets are
// planned as plan_residency() does, with the head required.
Result<ResidencyPlan> plan_residency_as_target_alone(const ModelWeights& w, uint64_t kv_bytes, uint64_t scratch_bytes,
                                                     uint64_t extra_bytes, const MemoryBudget& budget, int n_buffers,
                                                     bool* on_top);

}  // namespace sf
