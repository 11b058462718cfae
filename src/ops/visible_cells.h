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

// How many leading entries two lists have in common: the cells that a block of rows can
// widen once for all of them (every row of a token tree begins with the committed prefix).
int64_t common_prefix(const int32_t* a, int64_t na, const int32_t* b, int64_t nb);

}  // namespace sf
