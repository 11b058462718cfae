#include "ops/visible_cells.h"

#include <algorithm>
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

int64_t common_prefix(const int32_t* a, int64_t na, const int32_t* b, int64_t nb) {
  const int64_t n = std::min(na, nb);
  // The shared part is long (a whole context) and its mismatch is near its end: compare
  // 256-byte blocks with memcmp, then the last block's entries one by one.
  constexpr int64_t kBlock = 64;
  int64_t i = 0;
  while (i + kBlock <= n && std::memcmp(a + i, b + i, kBlock * sizeof(int32_t)) == 0) i += kBlock;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace sf
