// Tile kernels (dot_tile.h) for the legacy formats: Q4_0, Q5_0 and Q8_0 weights with Q8_0
// activations, Q4_1 and Q5_1 with Q8_1 activations.
//
// DotRowsT in dot_simd_q.cc keeps two accumulators per row, even blocks in one and odd in
// the other, each updated in block order, and adds them at the end (Q4_1/Q5_1: two more
// one-lane accumulators for the m_w * s_x terms, paired the same way). The two are
// independent, so here the even blocks run first (their accumulators parked in memory), then
// the odd ones: only R x C accumulators live in registers, and every accumulator still sees
// exactly the same sequence of operations, hence the same floats.
#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/dot_tile.h"
#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/dot_tile_q.cc"
#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "quant/legacy_traits-inl.h"
#include "quant/simd_common-inl.h"
#include "quant/vnni_q-inl.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // the kernels of vnni_q-inl.h inline only into VNNI code
#endif
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

// Activation rows per tile: four when 32 vector registers hold the 16 accumulators and
// their operands (AVX-512), two on 16-register targets.
inline constexpr int kTileC = kL16 == 32 ? 4 : 2;
inline constexpr int kTileR = 4;

// R weight rows x C activation rows. When prefetch is set, the R rows after this tile's are
// fetched as one sequential stream spread over the blocks (as DotRowsT does).
template <class T, int R, int C>
HWY_INLINE void TileT(const uint8_t* w, size_t stride, const uint8_t* x, size_t xstride, int64_t n, float* out,
                      int64_t out_stride, bool prefetch) {
  using Block = typename T::Block;
  using XBlock = typename T::XBlock;
  // The minimum terms' one-lane accumulators, as in DotRowsT (dot_simd_q.cc).
  using D1 = hn::CappedTag<float, 1>;
  const int64_t nb = n / kQK;
  const float* f16 = fp16_table();
  constexpr size_t kL = hn::MaxLanes(DF());
  HWY_ALIGN float even[R][C][kL];
  float even_min[R][C] = {};  // set at a == 0, read at a == 1 (zeroed: GCC on Arm cannot tell)
  for (int a = 0; a < 2; ++a) {
    VF acc[R][C];
    hn::Vec<D1> accm[R][C];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        acc[r][c] = hn::Zero(DF());
        accm[r][c] = hn::Zero(D1());
      }
    for (int64_t ib = a; ib < nb; ib += 2) {
      if (prefetch && a == 0) {
        constexpr size_t kStep = R * 2 * sizeof(Block);
        const uint8_t* p = w + R * stride + static_cast<size_t>(ib / 2) * kStep;
        for (size_t o = 0; o < kStep; o += 64) hwy::Prefetch(p + o);
      }
      V16 xv[C][kChunks];
      VF dx[C];
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        const XBlock& xb = reinterpret_cast<const XBlock*>(x + c * xstride)[ib];
#pragma GCC unroll 4
        for (size_t k = 0; k < kChunks; ++k) xv[c][k] = LoadI8(xb.qs + k * kL16);
        dx[c] = hn::Set(DF(), f16[xb.d]);
      }
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const Block& b = reinterpret_cast<const Block*>(w + r * stride)[ib];
        V16 wv[kChunks];
        T::Load(b, wv);
        const VF dw = hn::Set(DF(), f16[b.d]);
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) {
          V32 s0 = hn::Zero(D32()), s1 = hn::Zero(D32());
#pragma GCC unroll 4
          for (size_t k = 0; k < kChunks; ++k) MulAcc(wv[k], xv[c][k], s0, s1);
          const VF sum = hn::ConvertTo(DF(), FinishDot(s0, s1));
          acc[r][c] = hn::MulAdd(sum * dw, dx[c], acc[r][c]);
          if constexpr (T::kHasMin) {
            const XBlock& xb = reinterpret_cast<const XBlock*>(x + c * xstride)[ib];
            accm[r][c] = hn::MulAdd(hn::Set(D1(), f16[b.m]), hn::Set(D1(), f16[xb.s]), accm[r][c]);
          }
        }
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        if (a == 0) {
          hn::Store(acc[r][c], DF(), even[r][c]);
          even_min[r][c] = hn::GetLane(accm[r][c]);
        } else {
          const float sum = ReduceSum(hn::Load(DF(), even[r][c]) + acc[r][c]) * (1.0f / T::kScale);
          // DotRowsT adds its minimum accumulators (zero without a minimum) the same way.
          out[c * out_stride + r] = sum + (even_min[r][c] + hn::GetLane(accm[r][c]));
        }
      }
    }
  }
}

template <class T>
void Tile(const void* weight, size_t row_stride, int64_t n_rows, const void* act, size_t act_stride, int64_t n_act,
          int64_t n, float* out, int64_t out_stride) {
  SF_CHECK(n % kQK == 0, "dot of %lld elements: not whole blocks", static_cast<long long>(n));
  const auto* w = static_cast<const uint8_t*>(weight);
  const auto* x = static_cast<const uint8_t*>(act);
  int64_t r = 0;
  for (; r + kTileR <= n_rows; r += kTileR) {
    const uint8_t* wr = w + r * row_stride;
    int64_t c = 0;
    for (; c + kTileC <= n_act; c += kTileC)
      TileT<T, kTileR, kTileC>(wr, row_stride, x + c * act_stride, act_stride, n, out + c * out_stride + r, out_stride,
                               c == 0 && r + 2 * kTileR <= n_rows);
    if constexpr (kTileC > 2) {
      // Two rows left (a batch of two is common: the root and one draft token).
      if (c + 2 <= n_act) {
        TileT<T, kTileR, 2>(wr, row_stride, x + c * act_stride, act_stride, n, out + c * out_stride + r, out_stride,
                            false);
        c += 2;
      }
    }
    for (; c < n_act; ++c)
      TileT<T, kTileR, 1>(wr, row_stride, x + c * act_stride, act_stride, n, out + c * out_stride + r, out_stride,
                          false);
  }
  for (; r < n_rows; ++r) {
    const uint8_t* wr = w + r * row_stride;
    int64_t c = 0;
    for (; c + kTileC <= n_act; c += kTileC)
      TileT<T, 1, kTileC>(wr, row_stride, x + c * act_stride, act_stride, n, out + c * out_stride + r, out_stride,
                          false);
    for (; c < n_act; ++c)
      TileT<T, 1, 1>(wr, row_stride, x + c * act_stride, act_stride, n, out + c * out_stride + r, out_stride, false);
  }
}

template <class T>
DotTile Entry() {
#if HWY_TARGET == HWY_AVX3_DL
  // This target's dot of these formats (all five) is the VNNI chain, which only the VNNI tile
  // matches. Batches under kVnniMinRows rows run dot_rows per row instead (vnni_panels-inl.h).
  if constexpr (kVnni<T>)
    return DotTile{&VnniTileRun<VnniFormat<T>>, &VnniPreparedBytes, &VnniPrepare<VnniFormat<T>>, kVnniMinRows};
#endif
  return DotTile{&Tile<T>, nullptr, nullptr};
}

DotTile GetTile(GgmlType weight_type, GgmlType activation_type) {
  if (activation_type == GgmlType::Q8_1) {
    if (weight_type == GgmlType::Q4_1) return Entry<Q4_1Traits>();
    if (weight_type == GgmlType::Q5_1) return Entry<Q5_1Traits>();
    return DotTile{};
  }
  if (activation_type != GgmlType::Q8_0) return DotTile{};
  switch (weight_type) {
    case GgmlType::Q4_0:
      return Entry<Q4_0Traits>();
    case GgmlType::Q5_0:
      return Entry<Q5_0Traits>();
    case GgmlType::Q8_0:
      return Entry<Q8_0Traits>();
    default:
      return DotTile{};
  }
}

#else  // HWY_SCALAR: no tiles; matmul uses the reference dot kernels row by row.

DotTile GetTile(GgmlType, GgmlType) { return DotTile{}; }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "quant/dot_tile_float.h"
#include "quant/dot_tile_k.h"

namespace sf {
namespace quant {
HWY_EXPORT(GetTile);
}  // namespace quant

// The legacy formats' tiles (this file), else the K-quants' (dot_tile_k.cc), else the float
// formats' (dot_simd_float.cc).
DotTile find_dot_tile(GgmlType weight_type, GgmlType activation_type) {
  return find_dot_tile_for_target(weight_type, activation_type, 0);
}

DotTile find_dot_tile_for_target(GgmlType weight_type, GgmlType activation_type, int64_t target) {
  const DotTile legacy = quant::pick_target(quant::HWY_DISPATCH_TABLE(GetTile), target)(weight_type, activation_type);
  if (legacy) return legacy;
  const DotTile k = quant::k_dot_tile(weight_type, activation_type, target);
  if (k) return k;
  return quant::float_dot_tile(weight_type, activation_type, target);
}

}  // namespace sf
#endif  // HWY_ONCE
