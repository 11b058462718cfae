// Flattening a token tree into one verification batch.
//
// Row 0 is the pending root token at position n_past (cell n_past); row 1 + i is tree
// node i at position n_past + depth (cell n_past + 1 + i). Each row attends to the
// committed prefix, the root, its ancestors and itself: the ancestor-only mask that makes
// every row compute exactly what sequential decoding of its path would.
#pragma once

#include <cstdint>

#include "model/forward_batch.h"
#include "spec/token_tree.h"

namespace sf {

ForwardBatch make_tree_batch(const TokenTree& tree, int32_t root_token, int32_t n_past);
// The same into `batch`, reusing its buffers (the decode loop builds one a cycle).
void fill_tree_batch(const TokenTree& tree, int32_t root_token, int32_t n_past, ForwardBatch* batch);

// Row of node i in that batch (row 0 is the root).
inline int64_t tree_row(int32_t node) { return node + 1; }

}  // namespace sf
