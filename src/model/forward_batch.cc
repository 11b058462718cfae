#include "model/forward_batch.h"

namespace sf {

ForwardBatch ForwardBatch::causal(const std::vector<int32_t>& tokens, int32_t n_past) {
  ForwardBatch b;
  const int32_t n = static_cast<int32_t>(tokens.size());
  b.tokens = tokens;
  b.n_kv = n_past + n;
  b.positions.resize(n);
  b.kv_cells.resize(n);
  b.mask.assign(static_cast<size_t>(n) * b.n_kv, 0);
  for (int32_t i = 0; i < n; ++i) {
    b.positions[i] = n_past + i;
    b.kv_cells[i] = n_past + i;
    for (int32_t c = 0; c <= n_past + i; ++c) b.mask[static_cast<size_t>(i) * b.n_kv + c] = 1;
  }
  return b;
}

}  // namespace sf
