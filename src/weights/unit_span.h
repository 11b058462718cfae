// The byte range of the file a streamed unit is read from: the span covering all of the
// unit's matrices, widened to 4096-byte boundaries for O_DIRECT. In a packed file
// (`specflash pack`) this is exactly the unit's tensors; in an unpacked file it may also
// cover neighbouring small tensors, which are read and ignored.
#pragma once

#include <cstdint>

#include "model/model_weights.h"

namespace sf {

constexpr uint64_t kStreamAlignment = 4096;

struct UnitSpan {
  uint64_t begin = 0;  // aligned down
  uint64_t end = 0;    // aligned up (may pass the end of the file; the reader zero-fills)
  uint64_t size() const { return end - begin; }
};

UnitSpan unit_span(const ModelWeights& w, int unit);

}  // namespace sf
