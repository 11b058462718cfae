#include "ops/visible_cells.h"

#include <cstring>

namespace sf {

int64_t visible_cells(const uint8_t* mask, int64_t n_kv, int32_t* cells) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  int64_t n = 0, c = 0;
  // Eight mask bytes at a time: the committed prefix is all-visible and the rest of a tree
  // row is mostly masked, so whole words are the common case.
  for (; c + 8 <= n_kv; c += 8) {
    uint64_t word;
    std::memcpy(&word, mask + c, sizeof(word));
    if (word == 0) continue;
    const bool has_zero_byte = ((word - kOnes) & ~word & kHighs) != 0;
    if (!has_zero_byte) {
      for (int i = 0; i < 8; ++i) cells[n + i] = static_cast<int32_t>(c + i);
      n += 8;
    } else {
      for (int i = 0; i < 8; ++i)
        if (mask[c + i]) cells[n++] = static_cast<int32_t>(c + i);
    }
  }
  for (; c < n_kv; ++c)
    if (mask[c]) cells[n++] = static_cast<int32_t>(c);
  return n;
}

}  // namespace sf
