#include "kv/kv_cache.h"

#include <cstring>

#include "base/check.h"

namespace sf {

KvCache::KvCache(int n_layer, int n_ctx, int n_head_kv, int head_dim)
    : n_layer_(n_layer), n_ctx_(n_ctx), n_head_kv_(n_head_kv), head_dim_(head_dim) {
  const size_t half = bytes_for(n_layer, n_ctx, kv_dim()) / 2;
  k_.allocate(half);
  v_.allocate(half);
}

void KvCache::set_committed(int n) {
  SF_CHECK(n >= 0 && n <= n_ctx_, "committed cell count %d outside [0, %d]", n, n_ctx_);
  n_committed_ = n;
}

void KvCache::move_cell(int from, int to) {
  SF_CHECK(from >= 0 && from < n_ctx_ && to >= 0 && to < n_ctx_);
  if (from == to) return;
  for (int l = 0; l < n_layer_; ++l)
    for (int h = 0; h < n_head_kv_; ++h) {
      std::memcpy(k(l, h, to), k(l, h, from), head_dim_ * sizeof(uint16_t));
      std::memcpy(v(l, h, to), v(l, h, from), head_dim_ * sizeof(uint16_t));
    }
}

}  // namespace sf
