#include "spec/tree_batch.h"

namespace sf {

ForwardBatch make_tree_batch(const TokenTree& tree, int32_t root_token, int32_t n_past) {
  ForwardBatch b;
  fill_tree_batch(tree, root_token, n_past, &b);
  return b;
}

void fill_tree_batch(const TokenTree& tree, int32_t root_token, int32_t n_past, ForwardBatch* batch) {
  ForwardBatch& b = *batch;
  const int32_t n = 1 + tree.size();
  b.n_kv = n_past + n;
  b.tokens.resize(n);
  b.positions.resize(n);
  b.kv_cells.resize(n);
  b.mask.assign(static_cast<size_t>(n) * b.n_kv, 0);
  b.tokens[0] = root_token;
  b.positions[0] = n_past;
  b.kv_cells[0] = n_past;
  for (int32_t i = 0; i < tree.size(); ++i) {
    b.tokens[1 + i] = tree.node(i).token;
    b.positions[1 + i] = n_past + tree.node(i).depth;
    b.kv_cells[1 + i] = n_past + 1 + i;
  }
  for (int32_t r = 0; r < n; ++r) {
    uint8_t* m = b.mask.data() + static_cast<size_t>(r) * b.n_kv;
    for (int32_t c = 0; c <= n_past; ++c) m[c] = 1;  // prefix and the root
    for (int32_t node = r - 1; node >= 0; node = tree.node(node).parent) m[n_past + 1 + node] = 1;
  }
}

}  // namespace sf
