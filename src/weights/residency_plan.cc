#include "weights/residency_plan.h"

#include <algorithm>
#include <cstdio>

#include "base/aligned_buffer.h"
#include "weights/unit_span.h"

namespace sf {

std::string ResidencyPlan::describe() const {
  char buf[512];
  const int n_layers = static_cast<int>(resident.size()) - 1;
  std::snprintf(buf, sizeof(buf),
                "%d/%d layers pinned, LM head %s; %d stream buffers of %s; footprint %s (weights %s, KV %s, scratch "
                "%s)%s%s; streams %s per pass",
                n_resident_layers, n_layers, head_resident ? "pinned" : "streamed", n_buffers,
                format_bytes(buffer_bytes).c_str(), format_bytes(footprint_bytes()).c_str(),
                format_bytes(base_bytes + resident_unit_bytes).c_str(), format_bytes(kv_bytes).c_str(),
                format_bytes(scratch_bytes).c_str(), budget_bytes ? " of budget " : "",
                budget_bytes ? format_bytes(budget_bytes).c_str() : "", format_bytes(streamed_bytes_per_pass).c_str());
  return buf;
}

Result<ResidencyPlan> plan_residency(const ModelWeights& w, uint64_t kv_bytes, uint64_t scratch_bytes,
                                     const MemoryBudget& budget, int n_buffers, bool require_head) {
  const int n_layers = w.n_units() - 1;
  const int head = w.head_unit();

  // Every candidate plan: layers [0, k) pinned, head pinned or not (a tied head is part of
  // the embeddings and always resident).
  auto make = [&](int k, bool head_pinned) {
    ResidencyPlan p;
    p.resident.assign(w.n_units(), false);
    for (int l = 0; l < k; ++l) p.resident[l] = true;
    p.resident[head] = head_pinned || w.head_is_tied();
    p.n_resident_layers = k;
    p.head_resident = p.resident[head];
    p.base_bytes = w.base_resident_bytes();
    p.kv_bytes = kv_bytes;
    p.scratch_bytes = scratch_bytes;
    uint64_t max_span = 0;
    for (int u = 0; u < w.n_units(); ++u) {
      if (p.resident[u]) {
        p.resident_unit_bytes += w.unit_bytes(u);
      } else {
        const UnitSpan span = unit_span(w, u);
        p.streamed_bytes_per_pass += span.size();
        max_span = std::max(max_span, span.size());
      }
    }
    if (p.streamed_bytes_per_pass > 0) {
      p.n_buffers = n_buffers;
      p.buffer_bytes =
          AlignedBuffer::huge_allocation_bytes(max_span, kStreamAlignment);  // as LayerStreamer allocates it
    }
    return p;
  };

  // A share budget is a share of the layers' bytes, and the LM head stays resident on top of
  // it, like the embeddings, whichever method runs: early-exit pruning and Mirror-SD's token
  // channel need it resident, and when only they pinned it on top of the share, the methods
  // that need it streamed fewer bytes per pass than the others at the "same" budget
  // (stories260K at 0%: 904 KiB against 1.0 MiB, which the c384744 report counted as their
  // speed). A byte budget counts the head in the footprint like everything else.
  const bool share = budget.kind == MemoryBudget::Kind::kModelShare;
  if (share) require_head = true;
  uint64_t layer_total = 0;
  for (int l = 0; l < n_layers; ++l) layer_total += w.unit_bytes(l);
  const uint64_t pin_limit = share ? static_cast<uint64_t>(budget.share * static_cast<double>(layer_total)) : 0;
  bool found = false;
  ResidencyPlan best, smallest;
  for (int k = 0; k <= n_layers; ++k) {
    for (bool head_pinned : {false, true}) {
      if (require_head && !head_pinned && !w.head_is_tied()) continue;
      const ResidencyPlan p = make(k, head_pinned);
      if (k == 0 && (!head_pinned || require_head)) smallest = p;
      if (p.footprint_bytes() < smallest.footprint_bytes()) smallest = p;
      bool fits = true;
      if (budget.kind == MemoryBudget::Kind::kBytes) fits = p.footprint_bytes() <= budget.bytes;
      const uint64_t required = require_head && !w.head_is_tied() ? w.unit_bytes(head) : 0;
      if (share) fits = p.resident_unit_bytes - required <= pin_limit;
      if (!fits) continue;
      // Most pinned bytes wins; on a tie, more pinned layers (self-speculation uses them).
      if (!found || p.resident_unit_bytes > best.resident_unit_bytes ||
          (p.resident_unit_bytes == best.resident_unit_bytes && p.n_resident_layers > best.n_resident_layers)) {
        best = p;
        found = true;
      }
    }
  }
  if (!found) {
    return Status::Errorf(
        "memory budget %s is below the minimum of %s for this model and context (embeddings and norms %s, %d stream "
        "buffers of %s, KV cache %s, scratch %s); raise --mem-budget or lower --ctx-size",
        budget.to_string().c_str(), format_bytes(smallest.footprint_bytes()).c_str(),
        format_bytes(smallest.base_bytes).c_str(), smallest.n_buffers, format_bytes(smallest.buffer_bytes).c_str(),
        format_bytes(kv_bytes).c_str(), format_bytes(scratch_bytes).c_str());
  }
  best.budget_bytes = budget.kind == MemoryBudget::Kind::kBytes ? budget.bytes : 0;
  return best;
}

Result<ResidencyPlan> plan_residency_as_target_alone(const ModelWeights& w, uint64_t kv_bytes, uint64_t scratch_bytes,
                                                     uint64_t extra_bytes, const MemoryBudget& budget, int n_buffers,
                                                     bool* on_top) {
  *on_top = false;
  if (budget.kind != MemoryBudget::Kind::kModelShare)
    return plan_residency(w, kv_bytes, scratch_bytes + extra_bytes, budget, n_buffers, /*require_head=*/true);
  SF_ASSIGN_OR_RETURN(const ResidencyPlan alone, plan_residency(w, kv_bytes, scratch_bytes, budget, n_buffers));
  MemoryBudget same;
  same.kind = MemoryBudget::Kind::kBytes;
  same.bytes = alone.footprint_bytes();
  auto within = plan_residency(w, kv_bytes, scratch_bytes + extra_bytes, same, n_buffers, /*require_head=*/true);
  if (within.ok()) return within;
  *on_top = true;
  return plan_residency(w, kv_bytes, scratch_bytes + extra_bytes, budget, n_buffers, /*require_head=*/true);
}

}  // namespace sf
