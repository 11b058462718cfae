// ForwardBatch: the rows one forward pass processes. Each row is a token at an explicit
// position, writes its K/V into an explicit cache cell, and attends to the cache cells its
// mask row allows. Causal prefill, single-token decode and a flattened token tree are all
// just different batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sf {

struct ForwardBatch {
  std::vector<int32_t> tokens;     // [n]
  std::vector<int32_t> positions;  // [n] RoPE positions
  std::vector<int32_t> kv_cells;   // [n] cache cell each row writes
  int32_t n_kv = 0;                // rows may attend within cells [0, n_kv)
  std::vector<uint8_t> mask;       // [n, n_kv]; 1 = row may attend to cell

  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  bool can_attend(int64_t row, int32_t cell) const { return mask[row * n_kv + cell] != 0; }

  // Tokens appended after `n_past` committed cells: positions and cells n_past.., each row
  // attends to everything before it and itself.
  static ForwardBatch causal(const std::vector<int32_t>& tokens, int32_t n_past);
};

}  // namespace sf
