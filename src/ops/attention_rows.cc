// Per-target attention kernel (see attention_rows.h for the invariants it keeps): one row,
// or a block of rows of one KV head that share the start of their visible lists, run tile by
// tile with the pieces of ops/attention_tiles-inl.h.
#include "ops/attention_rows.h"

#include <algorithm>
#include <cmath>

#include "base/fp16.h"
#include "quant/simd_targets.h"  // before any hwy header: the instruction sets to compile

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/attention_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// After highway.h, inside the per-target pass.
#include "ops/attention_tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Plain loops with the same contract, for head sizes that are not a multiple of 4 and for
// the scalar target.
void AttendScalar(const AttentionRowArgs& a) {
  const int D = a.head_dim;
  const int64_t n = a.n_cells;
  for (int g = 0; g < a.group; ++g) {
    const float* q = a.q + g * D;
    float* s = a.scores;
    float max = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      const uint16_t* kc = a.k + a.cells[j] * a.kv_row;
      float dot = 0.0f;
      for (int d = 0; d < D; ++d) dot += q[d] * fp16_to_fp32(kc[d]);
      s[j] = dot * a.scale;
      max = std::max(max, s[j]);
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      s[j] = std::exp(s[j] - max);
      sum += s[j];
    }
    float* o = a.out + g * D;
    for (int d = 0; d < D; ++d) o[d] = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      const uint16_t* vc = a.v + a.cells[j] * a.kv_row;
      for (int d = 0; d < D; ++d) o[d] += s[j] * fp16_to_fp32(vc[d]);
    }
    const float inv = 1.0f / sum;
    for (int d = 0; d < D; ++d) o[d] *= inv;
  }
}

#if HWY_TARGET != HWY_SCALAR

// The query heads of a block of rows, numbered row by row: stream i is head i % group of row
// i / group. Streams are taken two at a time (four for small heads' value sums) so that each
// tile row loaded serves several independent chains (a row with one head per KV head pairs
// with the next row); which stream a head runs beside never changes its arithmetic.
struct Streams {
  const AttentionRowArgs* rows;
  int group, head_dim;
  const float* q(int i) const { return rows[i / group].q + (i % group) * head_dim; }
  // Scores (then probabilities) of stream i's head from cell t0 of its row's list.
  float* p(int i, int64_t t0) const {
    const AttentionRowArgs& a = rows[i / group];
    return a.scores + (i % group) * a.n_cells + t0;
  }
  float* acc(int i) const {  // its value sums
    const AttentionRowArgs& a = rows[i / group];
    return a.scores + group * a.n_cells + (i % group) * head_dim;
  }
};

// Scores of the streams' heads for a widened key tile holding cells [t0, t0 + nt) of their
// lists.
template <class D>
HWY_INLINE void ScoreTile(D d, const Streams& st, int n_streams, float scale, const float* keys, int64_t t0,
                          int64_t nt) {
  const int hd = st.head_dim;
  int i = 0;
  for (; i + 2 <= n_streams; i += 2)
    KeyScoresPair(d, st.q(i), st.q(i + 1), keys, nt, hd, scale, st.p(i, t0), st.p(i + 1, t0));
  if (i < n_streams) KeyScores(d, st.q(i), keys, nt, hd, scale, st.p(i, t0));
}

// The streams' value sums += their probabilities times a widened value tile of cells
// [t0, t0 + nt).
template <class D>
HWY_INLINE void SumTile(D d, const Streams& st, int n_streams, const float* values, int64_t t0, int64_t nt) {
  const int hd = st.head_dim;
  const int chunks = hd / static_cast<int>(hn::Lanes(d));
  int i = 0;
  if (chunks <= 2) {
    for (; i + 4 <= n_streams; i += 4) {
      const float* p[4] = {st.p(i, t0), st.p(i + 1, t0), st.p(i + 2, t0), st.p(i + 3, t0)};
      float* acc[4] = {st.acc(i), st.acc(i + 1), st.acc(i + 2), st.acc(i + 3)};
      if (chunks == 1)
        ValueSlabQuad<1>(d, p, values, nt, hd, acc);
      else
        ValueSlabQuad<2>(d, p, values, nt, hd, acc);
    }
  }
  for (; i + 2 <= n_streams; i += 2)
    ValueSumPair(d, st.p(i, t0), st.p(i + 1, t0), values, nt, hd, st.acc(i), st.acc(i + 1));
  if (i < n_streams) ValueSum(d, st.p(i, t0), values, nt, hd, st.acc(i));
}

// The rows of a block over their first n_shared cells (widened once per tile for all of them),
// then each row over the rest of its list. A row's scores and sums see its cells in list order
// whatever the tiling: a score depends on the cell's key alone, and the value sums are carried
// across tiles in memory. A single row is the block {a} with all its cells shared.
template <size_t kCap>
void AttendVector(const AttentionRowArgs* rows, int n_rows, int64_t n_shared) {
  const hn::CappedTag<float, kCap> d;
  const AttentionRowArgs& a0 = rows[0];
  const int hd = a0.head_dim;
  const int64_t tile = TileCells(hd);
  const int group = a0.group;
  HWY_ALIGN float buf[kTileFloats];
  const Streams block{rows, group, hd};
  // Keys: widen a tile once, score it for every head of the group of every row.
  for (int64_t t0 = 0; t0 < n_shared; t0 += tile) {
    const int64_t nt = std::min(tile, n_shared - t0);
    WidenTile(d, a0.k, a0.kv_row, a0.cells + t0, nt, hd, buf);
    ScoreTile(d, block, n_rows * group, a0.scale, buf, t0, nt);
  }
  for (int r = 0; r < n_rows; ++r) {
    const AttentionRowArgs& a = rows[r];
    const Streams row{&a, group, hd};
    for (int64_t t0 = n_shared; t0 < a.n_cells; t0 += tile) {
      const int64_t nt = std::min(tile, a.n_cells - t0);
      WidenTile(d, a.k, a.kv_row, a.cells + t0, nt, hd, buf);
      ScoreTile(d, row, group, a.scale, buf, t0, nt);
    }
  }
  // Each row's softmax over its own whole list; then its value sums start at zero.
  for (int r = 0; r < n_rows; ++r) {
    const AttentionRowArgs& a = rows[r];
    float* acc = a.scores + a.group * a.n_cells;
    float* inv = acc + a.group * hd;
    for (int g = 0; g < a.group; ++g) inv[g] = 1.0f / ExpAndSum(a.scores + g * a.n_cells, a.n_cells);
    std::fill(acc, acc + a.group * hd, 0.0f);
  }
  // Values: widen a tile once, add it into every head's sums of every row.
  for (int64_t t0 = 0; t0 < n_shared; t0 += tile) {
    const int64_t nt = std::min(tile, n_shared - t0);
    WidenTile(d, a0.v, a0.kv_row, a0.cells + t0, nt, hd, buf);
    SumTile(d, block, n_rows * group, buf, t0, nt);
  }
  const int N = static_cast<int>(hn::Lanes(d));
  for (int r = 0; r < n_rows; ++r) {
    const AttentionRowArgs& a = rows[r];
    const Streams row{&a, group, hd};
    for (int64_t t0 = n_shared; t0 < a.n_cells; t0 += tile) {
      const int64_t nt = std::min(tile, a.n_cells - t0);
      WidenTile(d, a.v, a.kv_row, a.cells + t0, nt, hd, buf);
      SumTile(d, row, group, buf, t0, nt);
    }
    const float* acc = a.scores + a.group * a.n_cells;
    const float* inv = acc + a.group * hd;
    for (int g = 0; g < a.group; ++g) {
      const auto vinv = hn::Set(d, inv[g]);
      for (int i = 0; i < hd; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, acc + g * hd + i), vinv), d, a.out + g * hd + i);
    }
  }
}

void AttendRows(const AttentionRowArgs* rows, int n_rows, int64_t n_shared) {
  const AttentionRowArgs& a = rows[0];
  // Plain loops for sizes that are not a multiple of 4, heads too big for a tile and groups
  // over 64 (as before: a row's path, and so its floats, must not change). Otherwise the
  // widest chunk that divides head_dim (capped at the vector width by CappedTag).
  if (a.head_dim > kTileFloats / 4 || a.group > 64 || a.head_dim % 4 != 0) {
    for (int r = 0; r < n_rows; ++r) AttendScalar(rows[r]);
  } else if (a.head_dim % 16 == 0) {
    AttendVector<16>(rows, n_rows, n_shared);
  } else if (a.head_dim % 8 == 0) {
    AttendVector<8>(rows, n_rows, n_shared);
  } else {
    AttendVector<4>(rows, n_rows, n_shared);
  }
}

#else  // HWY_SCALAR

void AttendRows(const AttentionRowArgs* rows, int n_rows, int64_t n_shared) {
  for (int r = 0; r < n_rows; ++r) AttendScalar(rows[r]);
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {

HWY_EXPORT(AttendRows);

void attend_visible_cells(const AttentionRowArgs& a) { HWY_DYNAMIC_DISPATCH(AttendRows)(&a, 1, a.n_cells); }

void attend_visible_rows(const AttentionRowArgs* rows, int n_rows, int64_t n_shared) {
  HWY_DYNAMIC_DISPATCH(AttendRows)(rows, n_rows, n_shared);
}

void attend_visible_cells_for_target(const AttentionRowArgs& a, int64_t target) {
  quant::pick_target(HWY_DISPATCH_TABLE(AttendRows), target)(&a, 1, a.n_cells);
}

void attend_visible_rows_for_target(const AttentionRowArgs* rows, int n_rows, int64_t n_shared, int64_t target) {
  quant::pick_target(HWY_DISPATCH_TABLE(AttendRows), target)(rows, n_rows, n_shared);
}

}  // namespace sf
#endif  // HWY_ONCE
