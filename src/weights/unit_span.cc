#include "weights/unit_span.h"

#include <algorithm>
#include <limits>

namespace sf {

UnitSpan unit_span(const ModelWeights& w, int unit) {
  uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
  for (const auto* t : w.unit_tensors(unit)) {
    lo = std::min(lo, t->file_offset);
    hi = std::max(hi, t->file_offset + t->n_bytes);
  }
  if (hi == 0) return {};
  return {lo / kStreamAlignment * kStreamAlignment, (hi + kStreamAlignment - 1) / kStreamAlignment * kStreamAlignment};
}

}  // namespace sf
