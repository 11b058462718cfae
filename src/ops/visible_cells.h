// The cells a query row may attend to, read from its byte mask. Attention works on this
// list instead of the whole mask so that masked cells cost only the scan, and so that a
// row's arithmetic depends on the visible cells alone: the same row gives the same floats
// whether the cache holds masked cells between or after the visible ones (a tree node's
// siblings and cousins) or not (plain decoding).
#pragma once

#include <cstdint>

namespace sf {

// Writes the indices c < n_kv with mask[c] != 0 to cells, ascending, and returns how many.
// cells must hold n_kv entries.
int64_t visible_cells(const uint8_t* mask, int64_t n_kv, int32_t* cells);

}  // namespace sf
