// Per-target attention kernel (see attention_rows.h for the invariants it keeps).
//
// Small heads (head_dim 8 on AVX-512 or AVX2) fit one vector that is at most as wide as the
// machine's: the key dot of a cell is then one widening load and one multiply, and the lane
// sums of four cells are folded together (two interleave steps and, above 128 bits, adding
// halves), so the horizontal work is shared instead of paid per cell.
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
#include "hwy/contrib/math/math-inl.h"

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

// Lanes of q times the key of one cell, chunk by chunk (not yet summed across lanes).
template <class D>
HWY_INLINE hn::Vec<D> KeyProducts(D d, const float* q, const hwy::float16_t* kc, int chunks) {
  const hn::Rebind<hwy::float16_t, D> dh;
  const size_t N = hn::Lanes(d);
  auto acc = hn::Mul(hn::LoadU(d, q), hn::PromoteTo(d, hn::LoadU(dh, kc)));
  for (int i = 1; i < chunks; ++i)
    acc = hn::MulAdd(hn::LoadU(d, q + i * N), hn::PromoteTo(d, hn::LoadU(dh, kc + i * N)), acc);
  return acc;
}

// s[j] = scale * (q . key of cells[j]) for j < n.
template <class D>
void KeyScores(D d, const AttentionRowArgs& a, const float* q, float* s) {
  const int chunks = a.head_dim / static_cast<int>(hn::Lanes(d));
  const auto* k = reinterpret_cast<const hwy::float16_t*>(a.k);
  const D4 d4;
  const auto scale = hn::Set(d4, a.scale);
  const int64_t n = a.n_cells;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const auto p0 = KeyProducts(d, q, k + a.cells[j] * a.kv_row, chunks);
    const auto p1 = KeyProducts(d, q, k + a.cells[j + 1] * a.kv_row, chunks);
    const auto p2 = KeyProducts(d, q, k + a.cells[j + 2] * a.kv_row, chunks);
    const auto p3 = KeyProducts(d, q, k + a.cells[j + 3] * a.kv_row, chunks);
    hn::StoreU(hn::Mul(SumLanes4(d, p0, p1, p2, p3), scale), d4, s + j);
  }
  if (j < n) {
    // The last one to three cells, padded with zero products (which leave the others' sums
    // untouched: each lane of SumLanes4 reads one input only).
    hn::Vec<D> p[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    for (int64_t i = 0; j + i < n; ++i) p[i] = KeyProducts(d, q, k + a.cells[j + i] * a.kv_row, chunks);
    alignas(16) float tail[4];
    hn::StoreU(hn::Mul(SumLanes4(d, p[0], p[1], p[2], p[3]), scale), d4, tail);
    for (int64_t i = 0; j + i < n; ++i) s[j + i] = tail[i];
  }
}

// s[j] = exp(s[j] - max s) in place; returns the sum (cell j in lane j % lanes).
float ExpAndSum(float* s, int64_t n) {
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

// out = (sum_j p[j] * value of cells[j]) * inv, lanes over head_dim, cells in list order.
template <class D>
void ValueSum(D d, const AttentionRowArgs& a, const float* p, float inv, float* out) {
  constexpr int kSlab = 8;  // accumulators kept in registers at once
  const hn::Rebind<hwy::float16_t, D> dh;
  const int N = static_cast<int>(hn::Lanes(d));
  const int chunks = a.head_dim / N;
  const auto* v = reinterpret_cast<const hwy::float16_t*>(a.v);
  for (int c0 = 0; c0 < chunks; c0 += kSlab) {
    const int width = std::min(kSlab, chunks - c0);
    hn::Vec<D> acc[kSlab];
    for (int i = 0; i < kSlab; ++i) acc[i] = hn::Zero(d);
    for (int64_t j = 0; j < a.n_cells; ++j) {
      const auto pj = hn::Set(d, p[j]);
      const hwy::float16_t* vc = v + a.cells[j] * a.kv_row + c0 * N;
      for (int i = 0; i < width; ++i) acc[i] = hn::MulAdd(pj, hn::PromoteTo(d, hn::LoadU(dh, vc + i * N)), acc[i]);
    }
    const auto vinv = hn::Set(d, inv);
    for (int i = 0; i < width; ++i) hn::StoreU(hn::Mul(acc[i], vinv), d, out + (c0 + i) * N);
  }
}

template <size_t kCap>
void AttendVector(const AttentionRowArgs& a) {
  const hn::CappedTag<float, kCap> d;
  const int D = a.head_dim;
  for (int g = 0; g < a.group; ++g) {
    float* s = a.scores;
    KeyScores(d, a, a.q + g * D, s);
    const float sum = ExpAndSum(s, a.n_cells);
    ValueSum(d, a, s, 1.0f / sum, a.out + g * D);
  }
}

void Attend(const AttentionRowArgs& a) {
  // The widest chunk that divides head_dim (capped at the vector width by CappedTag).
  if (a.head_dim % 16 == 0) return AttendVector<16>(a);
  if (a.head_dim % 8 == 0) return AttendVector<8>(a);
  if (a.head_dim % 4 == 0) return AttendVector<4>(a);
  AttendScalar(a);
}

#else  // HWY_SCALAR

void Attend(const AttentionRowArgs& a) { AttendScalar(a); }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {

HWY_EXPORT(Attend);

void attend_visible_cells(const AttentionRowArgs& a) { HWY_DYNAMIC_DISPATCH(Attend)(a); }

void attend_visible_cells_for_target(const AttentionRowArgs& a, int64_t target) {
  quant::pick_target(HWY_DISPATCH_TABLE(Attend), target)(a);
}

}  // namespace sf
#endif  // HWY_ONCE
