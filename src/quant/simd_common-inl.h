// Per-target helpers shared by the quant/ SIMD kernels (re-included once per Highway target
// through foreach_target.h, hence the toggle guard instead of #pragma once).
//
// Integer dot products run on int16 lanes: both operands are widened from 8 bits and
// ReorderWidenMulAccumulate (pmaddwd on x86, smlal on NEON) multiplies and adds pairs into
// int32. That is exact for every format here (|w*x| <= 8064 * 127 per product).
//
// The kernels assume fixed-size vectors of 128, 256 or 512 bits (simd_targets.h excludes
// scalable targets): kL16, the number of int16 lanes, is 8, 16 or 32, and a 32-element run of
// a block is kChunks = 32 / kL16 vectors.
#if defined(SF_QUANT_SIMD_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_SIMD_COMMON_INL_H_
#undef SF_QUANT_SIMD_COMMON_INL_H_
#else
#define SF_QUANT_SIMD_COMMON_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

using D16 = hn::ScalableTag<int16_t>;
using DU16 = hn::RebindToUnsigned<D16>;
using D32 = hn::Repartition<int32_t, D16>;
using DF = hn::Repartition<float, D16>;
using V16 = hn::Vec<D16>;
using V32 = hn::Vec<D32>;
using VF = hn::Vec<DF>;

inline constexpr size_t kL16 = hn::MaxLanes(D16());
inline constexpr size_t kChunks = 32 / kL16;
static_assert(kL16 == 8 || kL16 == 16 || kL16 == 32, "quant kernels need 128/256/512-bit vectors");

// kL16 int8 values sign-extended to int16.
HWY_INLINE V16 LoadI8(const int8_t* p) {
  const hn::Rebind<int8_t, D16> d8;
  return hn::PromoteTo(D16(), hn::LoadU(d8, p));
}

// kL16 bytes zero-extended to int16.
HWY_INLINE V16 LoadU8(const uint8_t* p) {
  const hn::Rebind<uint8_t, D16> d8;
  return hn::BitCast(D16(), hn::PromoteTo(DU16(), hn::LoadU(d8, p)));
}

// Legacy 32-element blocks keep element j in the low nibble and element j + 16 in the high
// nibble of qs[j]. Returns the 32 nibbles (0..15) in element order as kChunks vectors.
HWY_INLINE void LoadNibbles16(const uint8_t* qs, V16* out) {
  if constexpr (kL16 == 32) {
    // [qs, qs] widened to 32 lanes; the upper 16 lanes shift their byte right by 4.
    const hn::Rebind<uint8_t, D16> d8;
    const DU16 du16;
    const auto both = hn::PromoteTo(du16, hn::LoadDup128(d8, qs));
    const auto shift = hn::And(hn::ShiftRight<2>(hn::Iota(du16, 0)), hn::Set(du16, 4));
    out[0] = hn::BitCast(D16(), hn::And(both >> shift, hn::Set(du16, 0xF)));
  } else if constexpr (kL16 == 16) {
    const V16 v = LoadU8(qs);
    out[0] = hn::And(v, hn::Set(D16(), 0xF));
    out[1] = hn::ShiftRight<4>(v);
  } else {
    const V16 v0 = LoadU8(qs), v1 = LoadU8(qs + 8);
    out[0] = hn::And(v0, hn::Set(D16(), 0xF));
    out[1] = hn::And(v1, hn::Set(D16(), 0xF));
    out[2] = hn::ShiftRight<4>(v0);
    out[3] = hn::ShiftRight<4>(v1);
  }
}

// sum += pairwise products of w and x (int16 -> int32); sum1 collects the half that some
// targets (NEON) keep separately, fold it with FinishDot.
HWY_INLINE void MulAcc(V16 w, V16 x, V32& sum0, V32& sum1) {
  sum0 = hn::ReorderWidenMulAccumulate(D32(), w, x, sum0, sum1);
}
HWY_INLINE V32 FinishDot(V32 sum0, V32 sum1) { return hn::RearrangeToOddPlusEven(sum0, sum1); }

HWY_INLINE float ReduceSum(VF v) { return hn::GetLane(hn::SumOfLanes(DF(), v)); }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_SIMD_COMMON_INL_H_ toggle
