// The per-tile pieces of the attention kernel (ops/attention_rows.cc), per Highway target:
// widening a tile of f16 keys or values to f32, key scores four cells at a time, the softmax
// over a row's list, and value sums for one, two or four heads. Each computes every result
// with one fixed sequence of float operations (see attention_rows.h), whichever variant runs
// and whichever row or head another chain belongs to.
//
// Small heads (head_dim 8 on AVX-512 or AVX2) fit one vector that is at most as wide as the
// machine's: the key dot of a cell is then one widening load and one multiply, and the lane
// sums of four cells are folded together (two interleave steps and, above 128 bits, adding
// halves), so the horizontal work is shared instead of paid per cell.
//
// Include inside the per-target pass (after hwy/highway.h and hwy/contrib/math/math-inl.h).
#if defined(SF_OPS_ATTENTION_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_OPS_ATTENTION_TILES_INL_H_
#undef SF_OPS_ATTENTION_TILES_INL_H_
#else
#define SF_OPS_ATTENTION_TILES_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hwy/cache_control.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

using D4 = hn::CappedTag<float, 4>;

// Adds the 128-bit blocks of v (one fixed tree: halves, then quarters).
template <class D>
HWY_INLINE hn::Vec<D4> FoldToBlock(D, hn::Vec<D> v) {
  if constexpr (hn::MaxLanes(D()) > 4) {
    const hn::Half<D> dh;
    return FoldToBlock(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    return v;
  }
}

// The lane sums of four vectors, as one 4-lane vector [sum p0, sum p1, sum p2, sum p3].
// Every lane sees the same pattern: within each 128-bit block (x0 + x2) + (x1 + x3), then
// the blocks folded together.
template <class D>
HWY_INLINE hn::Vec<D4> SumLanes4(D d, hn::Vec<D> p0, hn::Vec<D> p1, hn::Vec<D> p2, hn::Vec<D> p3) {
  const auto a = hn::Add(hn::InterleaveLower(d, p0, p1), hn::InterleaveUpper(d, p0, p1));
  const auto b = hn::Add(hn::InterleaveLower(d, p2, p3), hn::InterleaveUpper(d, p2, p3));
  const hn::Repartition<uint64_t, D> d64;
  const auto a64 = hn::BitCast(d64, a), b64 = hn::BitCast(d64, b);
  const auto c =
      hn::Add(hn::BitCast(d, hn::InterleaveLower(d64, a64, b64)), hn::BitCast(d, hn::InterleaveUpper(d64, a64, b64)));
  return FoldToBlock(d, c);
}

// f32 copies of the keys (or values) of nt cells, head_dim floats each, contiguous: widened
// once and then read by every query head of the group.
template <class D>
HWY_INLINE void WidenTile(D d, const uint16_t* base, int64_t kv_row, const int32_t* cells, int64_t nt, int head_dim,
                          float* buf) {
  const hn::Rebind<hwy::float16_t, D> dh;
  const int N = static_cast<int>(hn::Lanes(d));
  const auto* b = reinterpret_cast<const hwy::float16_t*>(base);
  // The cells of a head are kv_row apart, a few cache lines each, and at long contexts come
  // from DRAM: fetched 32 cells ahead, the widening does not wait on every load (1.1B decode
  // at 2,048 cells: attention 4.9 -> 3.4 ms per token; 8 and 16 ahead gave 4.1 and 3.6).
  constexpr int64_t kAhead = 32;
  const size_t cell_bytes = static_cast<size_t>(head_dim) * sizeof(uint16_t);
  for (int64_t j = 0; j < std::min(kAhead, nt); ++j)
    for (size_t o = 0; o < cell_bytes; o += 64)
      hwy::Prefetch(reinterpret_cast<const uint8_t*>(b + cells[j] * kv_row) + o);
  for (int64_t j = 0; j < nt; ++j) {
    if (j + kAhead < nt) {
      const auto* ahead = reinterpret_cast<const uint8_t*>(b + cells[j + kAhead] * kv_row);
      for (size_t o = 0; o < cell_bytes; o += 64) hwy::Prefetch(ahead + o);
    }
    const hwy::float16_t* src = b + cells[j] * kv_row;
    float* dst = buf + j * head_dim;
    for (int i = 0; i < head_dim; i += N) hn::StoreU(hn::PromoteTo(d, hn::LoadU(dh, src + i)), d, dst + i);
  }
}

// Lanes of q times one cell's key, chunk by chunk (not yet summed across lanes): the first
// chunk's product, then a MulAdd per further chunk, in order.
template <class D>
HWY_INLINE hn::Vec<D> KeyProducts(D d, const float* q, const float* key, int chunks) {
  const size_t N = hn::Lanes(d);
  auto acc = hn::Mul(hn::LoadU(d, q), hn::LoadU(d, key));
  for (int i = 1; i < chunks; ++i) acc = hn::MulAdd(hn::LoadU(d, q + i * N), hn::LoadU(d, key + i * N), acc);
  return acc;
}

// s[j] = scale * (q . keys[j]) for the nt widened keys of a tile.
template <class D>
HWY_INLINE void KeyScores(D d, const float* q, const float* keys, int64_t nt, int head_dim, float scale, float* s) {
  const int chunks = head_dim / static_cast<int>(hn::Lanes(d));
  const D4 d4;
  const auto vscale = hn::Set(d4, scale);
  int64_t j = 0;
  for (; j + 4 <= nt; j += 4) {
    const float* k = keys + j * head_dim;
    const auto p0 = KeyProducts(d, q, k, chunks);
    const auto p1 = KeyProducts(d, q, k + head_dim, chunks);
    const auto p2 = KeyProducts(d, q, k + 2 * head_dim, chunks);
    const auto p3 = KeyProducts(d, q, k + 3 * head_dim, chunks);
    hn::StoreU(hn::Mul(SumLanes4(d, p0, p1, p2, p3), vscale), d4, s + j);
  }
  if (j < nt) {
    // The last one to three cells, padded with zero products (which leave the others' sums
    // untouched: each lane of SumLanes4 reads one input only).
    hn::Vec<D> p[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    for (int64_t i = 0; j + i < nt; ++i) p[i] = KeyProducts(d, q, keys + (j + i) * head_dim, chunks);
    alignas(16) float tail[4];
    hn::StoreU(hn::Mul(SumLanes4(d, p[0], p[1], p[2], p[3]), vscale), d4, tail);
    for (int64_t i = 0; j + i < nt; ++i) s[j + i] = tail[i];
  }
}

// KeyScores for two heads at once: each key chunk is loaded once for both, and the two
// heads' products are independent chains (one head's four are latency bound). kChunks =
// head_dim / lanes when known at compile time: the two heads' q chunks are then loaded once
// per tile into registers and the chunk loop unrolls; 0: any count, q read per cell. Every
// score is computed exactly as KeyScores computes it (the same Mul, MulAdds and fold).
template <int kChunks, class D>
HWY_INLINE void KeyScoresPairT(D d, const float* qa, const float* qb, const float* keys, int64_t nt, int head_dim,
                               float scale, float* sa, float* sb) {
  static_assert(kChunks >= 0 && kChunks <= 8, "a pair's q chunks must fit the registers");
  const size_t N = hn::Lanes(d);
  const int chunks = kChunks > 0 ? kChunks : head_dim / static_cast<int>(N);
  // A compile-time stride between cells where kChunks gives it (constant address offsets).
  const int hd = kChunks > 0 ? kChunks * static_cast<int>(N) : head_dim;
  const D4 d4;
  const auto vscale = hn::Set(d4, scale);
  constexpr int kHeld = kChunks > 0 ? kChunks : 1;
  hn::Vec<D> va[kHeld], vb[kHeld];
  if constexpr (kChunks > 0) {
#pragma GCC unroll 8
    for (int i = 0; i < kChunks; ++i) {
      va[i] = hn::LoadU(d, qa + i * N);
      vb[i] = hn::LoadU(d, qb + i * N);
    }
  }
  const auto products = [&](const float* key, hn::Vec<D>& pa, hn::Vec<D>& pb) HWY_ATTR {
    const auto k0 = hn::LoadU(d, key);
    if constexpr (kChunks > 0) {
      pa = hn::Mul(va[0], k0);
      pb = hn::Mul(vb[0], k0);
#pragma GCC unroll 8
      for (int i = 1; i < kChunks; ++i) {
        const auto k = hn::LoadU(d, key + i * N);
        pa = hn::MulAdd(va[i], k, pa);
        pb = hn::MulAdd(vb[i], k, pb);
      }
    } else {
      pa = hn::Mul(hn::LoadU(d, qa), k0);
      pb = hn::Mul(hn::LoadU(d, qb), k0);
      for (int i = 1; i < chunks; ++i) {
        const auto k = hn::LoadU(d, key + i * N);
        pa = hn::MulAdd(hn::LoadU(d, qa + i * N), k, pa);
        pb = hn::MulAdd(hn::LoadU(d, qb + i * N), k, pb);
      }
    }
  };
  int64_t j = 0;
  for (; j + 4 <= nt; j += 4) {
    const float* k = keys + j * hd;
    hn::Vec<D> a0, a1, a2, a3, b0, b1, b2, b3;
    products(k, a0, b0);
    products(k + hd, a1, b1);
    products(k + 2 * hd, a2, b2);
    products(k + 3 * hd, a3, b3);
    hn::StoreU(hn::Mul(SumLanes4(d, a0, a1, a2, a3), vscale), d4, sa + j);
    hn::StoreU(hn::Mul(SumLanes4(d, b0, b1, b2, b3), vscale), d4, sb + j);
  }
  if (j < nt) {
    KeyScores(d, qa, keys + j * hd, nt - j, hd, scale, sa + j);
    KeyScores(d, qb, keys + j * hd, nt - j, hd, scale, sb + j);
  }
}

// Two heads' scores: KeyScoresPairT with the chunk counts 1, 2, 4 and 8 compiled (head_dim
// 16-128 with 16 lanes, 8-64 with 8), any other count at run time (e.g. head_dim 64 on
// NEON's 4 lanes: 16 chunks, which would not stay in registers).
template <class D>
HWY_INLINE void KeyScoresPair(D d, const float* qa, const float* qb, const float* keys, int64_t nt, int head_dim,
                              float scale, float* sa, float* sb) {
  switch (head_dim / static_cast<int>(hn::Lanes(d))) {
    case 1:
      return KeyScoresPairT<1>(d, qa, qb, keys, nt, head_dim, scale, sa, sb);
    case 2:
      return KeyScoresPairT<2>(d, qa, qb, keys, nt, head_dim, scale, sa, sb);
    case 4:
      return KeyScoresPairT<4>(d, qa, qb, keys, nt, head_dim, scale, sa, sb);
    case 8:
      return KeyScoresPairT<8>(d, qa, qb, keys, nt, head_dim, scale, sa, sb);
    default:
      return KeyScoresPairT<0>(d, qa, qb, keys, nt, head_dim, scale, sa, sb);
  }
}

// s[j] = exp(s[j] - max s) in place; returns the sum (cell j in lane j % lanes).
inline float ExpAndSum(float* s, int64_t n) {
  const hn::ScalableTag<float> df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  auto vmax = hn::Set(df, -INFINITY);
  int64_t j = 0;
  for (; j + L <= n; j += L) vmax = hn::Max(vmax, hn::LoadU(df, s + j));
  float max = hn::GetLane(hn::MaxOfLanes(df, vmax));
  for (int64_t i = j; i < n; ++i) max = std::max(max, s[i]);
  const auto vm = hn::Set(df, max);
  auto sum = hn::Zero(df);
  for (j = 0; j + L <= n; j += L) {
    const auto e = hn::Exp(df, hn::Sub(hn::LoadU(df, s + j), vm));
    hn::StoreU(e, df, s + j);
    sum = hn::Add(sum, e);
  }
  if (j < n) {
    HWY_ALIGN float tail[hn::MaxLanes(df)];
    for (int64_t i = 0; i < L; ++i) tail[i] = j + i < n ? s[j + i] : max;
    const auto e =
        hn::IfThenElseZero(hn::FirstN(df, static_cast<size_t>(n - j)), hn::Exp(df, hn::Sub(hn::Load(df, tail), vm)));
    hn::Store(e, df, tail);
    for (int64_t i = 0; j + i < n; ++i) s[j + i] = tail[i];
    sum = hn::Add(sum, e);
  }
  return hn::GetLane(hn::SumOfLanes(df, sum));
}

// acc[c0 * N ...] (W chunks) += sum_j p[j] * values[j], cells in order; W is a compile-time
// constant so the accumulators stay in registers.
template <int W, class D>
HWY_INLINE void ValueSlab(D d, const float* p, const float* values, int64_t nt, int head_dim, int c0, float* acc) {
  const int N = static_cast<int>(hn::Lanes(d));
  hn::Vec<D> v[W];
#pragma GCC unroll 8
  for (int i = 0; i < W; ++i) v[i] = hn::LoadU(d, acc + (c0 + i) * N);
  for (int64_t j = 0; j < nt; ++j) {
    const auto pj = hn::Set(d, p[j]);
    const float* row = values + j * head_dim + c0 * N;
#pragma GCC unroll 8
    for (int i = 0; i < W; ++i) v[i] = hn::MulAdd(pj, hn::LoadU(d, row + i * N), v[i]);
  }
#pragma GCC unroll 8
  for (int i = 0; i < W; ++i) hn::StoreU(v[i], d, acc + (c0 + i) * N);
}

// ValueSlab for two heads (probabilities pa, pb; sums acca, accb): each value row is loaded
// once for both, and the 2W accumulators are independent chains (one head's W are latency
// bound). Every sum runs over the cells in the same order as ValueSlab's.
template <int W, class D>
HWY_INLINE void ValueSlabPair(D d, const float* pa, const float* pb, const float* values, int64_t nt, int head_dim,
                              int c0, float* acca, float* accb) {
  const int N = static_cast<int>(hn::Lanes(d));
  hn::Vec<D> va[W], vb[W];
#pragma GCC unroll 8
  for (int i = 0; i < W; ++i) {
    va[i] = hn::LoadU(d, acca + (c0 + i) * N);
    vb[i] = hn::LoadU(d, accb + (c0 + i) * N);
  }
  for (int64_t j = 0; j < nt; ++j) {
    const auto wa = hn::Set(d, pa[j]), wb = hn::Set(d, pb[j]);
    const float* row = values + j * head_dim + c0 * N;
#pragma GCC unroll 8
    for (int i = 0; i < W; ++i) {
      const auto v = hn::LoadU(d, row + i * N);
      va[i] = hn::MulAdd(wa, v, va[i]);
      vb[i] = hn::MulAdd(wb, v, vb[i]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < W; ++i) {
    hn::StoreU(va[i], d, acca + (c0 + i) * N);
    hn::StoreU(vb[i], d, accb + (c0 + i) * N);
  }
}

// acc[0, head_dim) += sum_j p[j] * values[j] for the nt widened values of a tile. Every
// element is a sum over cells in list order, whatever the slab widths.
template <class D>
HWY_INLINE void ValueSum(D d, const float* p, const float* values, int64_t nt, int head_dim, float* acc) {
  const int chunks = head_dim / static_cast<int>(hn::Lanes(d));
  int c0 = 0;
  for (; c0 + 8 <= chunks; c0 += 8) ValueSlab<8>(d, p, values, nt, head_dim, c0, acc);
  if (c0 + 4 <= chunks) ValueSlab<4>(d, p, values, nt, head_dim, c0, acc), c0 += 4;
  if (c0 + 2 <= chunks) ValueSlab<2>(d, p, values, nt, head_dim, c0, acc), c0 += 2;
  if (c0 < chunks) ValueSlab<1>(d, p, values, nt, head_dim, c0, acc);
}

// ValueSum for two heads; the same sums in the same order (slabs of at most 4 chunks, so the
// two heads' accumulators and the loaded row fit the registers).
template <class D>
HWY_INLINE void ValueSumPair(D d, const float* pa, const float* pb, const float* values, int64_t nt, int head_dim,
                             float* acca, float* accb) {
  const int chunks = head_dim / static_cast<int>(hn::Lanes(d));
  int c0 = 0;
  for (; c0 + 4 <= chunks; c0 += 4) ValueSlabPair<4>(d, pa, pb, values, nt, head_dim, c0, acca, accb);
  if (c0 + 2 <= chunks) ValueSlabPair<2>(d, pa, pb, values, nt, head_dim, c0, acca, accb), c0 += 2;
  if (c0 < chunks) ValueSlabPair<1>(d, pa, pb, values, nt, head_dim, c0, acca, accb);
}

// Small heads (one or two chunks) for four streams: the sum of one cell is a single FMA, so
// one or two heads' chains wait on the FMA latency; four keep the FMA units busy. Every sum
// runs over the cells in the same order as ValueSlab's.
template <int W, class D>
HWY_INLINE void ValueSlabQuad(D d, const float* const* p, const float* values, int64_t nt, int head_dim,
                              float* const* acc) {
  const int N = static_cast<int>(hn::Lanes(d));
  hn::Vec<D> v[4][W];
#pragma GCC unroll 4
  for (int s = 0; s < 4; ++s)
#pragma GCC unroll 2
    for (int i = 0; i < W; ++i) v[s][i] = hn::LoadU(d, acc[s] + i * N);
  for (int64_t j = 0; j < nt; ++j) {
    const float* row = values + j * head_dim;
#pragma GCC unroll 2
    for (int i = 0; i < W; ++i) {
      const auto x = hn::LoadU(d, row + i * N);
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) v[s][i] = hn::MulAdd(hn::Set(d, p[s][j]), x, v[s][i]);
    }
  }
#pragma GCC unroll 4
  for (int s = 0; s < 4; ++s)
#pragma GCC unroll 2
    for (int i = 0; i < W; ++i) hn::StoreU(v[s][i], d, acc[s] + i * N);
}

// Widened tiles of at most this many floats (16 KiB, in L1 next to the group's scores).
inline constexpr int kTileFloats = 4096;

// Cells per tile for a head size: a multiple of 4, at most 256.
inline int64_t TileCells(int head_dim) { return std::clamp<int64_t>((kTileFloats / head_dim) & ~int64_t{3}, 4, 256); }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SF_OPS_ATTENTION_TILES_INL_H_ toggle
