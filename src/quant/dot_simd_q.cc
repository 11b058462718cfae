// SIMD dot kernels for the legacy 32-element formats: Q4_0, Q5_0, Q8_0 with Q8_0 activations,
// Q4_1, Q5_1 with Q8_1 activations.
//
// Per block: weights and activations widened to int16, one exact integer dot in int32 lanes,
// converted to float and scaled by d_w * d_x with one FMA into a per-row accumulator. Several
// accumulators per row (blocks round-robin) hide the FMA latency; they are summed at the end.
// This is the decode hot path (bandwidth bound), so per-block work is kept to a handful of
// vector ops; dot_rows shares the activation loads of up to four rows.
#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/kernel_registry.h"
#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/dot_simd_q.cc"
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

// The m_w * s_x terms of Q4_1/Q5_1 go to a one-lane accumulator with an explicit MulAdd, so
// the rounding is fixed by the code rather than by the compiler's contraction choices.
using D1 = hn::CappedTag<float, 1>;
using V1 = hn::Vec<D1>;

// Block ib of R rows (row r at w + r * stride) against activation block xb.
template <class T, int R>
HWY_INLINE void BlockStep(const uint8_t* w, size_t stride, int64_t ib, const typename T::XBlock& xb, const float* f16,
                          VF* acc, V1* accm) {
  V16 xv[kChunks];
#pragma GCC unroll 4
  for (size_t c = 0; c < kChunks; ++c) xv[c] = LoadI8(xb.qs + c * kL16);
  // (sum * d_w) * d_x with both scales broadcast straight from the fp16 table: x86 folds
  // them into the multiplies as memory operands, no shuffle needed.
  const VF dx = hn::Set(DF(), f16[xb.d]);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const auto& b = reinterpret_cast<const typename T::Block*>(w + r * stride)[ib];
    V16 wv[kChunks];
    T::Load(b, wv);
    V32 s0 = hn::Zero(D32()), s1 = hn::Zero(D32());
#pragma GCC unroll 4
    for (size_t c = 0; c < kChunks; ++c) MulAcc(wv[c], xv[c], s0, s1);
    const VF sum = hn::ConvertTo(DF(), FinishDot(s0, s1));
    acc[r] = hn::MulAdd(sum * hn::Set(DF(), f16[b.d]), dx, acc[r]);
    if constexpr (T::kHasMin) {
      accm[r] = hn::MulAdd(hn::Set(D1(), f16[b.m]), hn::Set(D1(), f16[xb.s]), accm[r]);
    }
  }
}

// Independent fp32 accumulators per row (blocks round-robin) to cover the FMA latency. Four
// made dot ~3% faster but the four-row dot_rows ~12% slower on AVX-512 (Zen 5); two it is.
inline constexpr int kAcc = 2;
static_assert(kAcc == 2, "DotRowsT's final sum adds exactly two accumulators");

template <class T, int R>
HWY_INLINE void DotRowsT(const uint8_t* w, size_t stride, const void* xp, int64_t n, float* out) {
  const auto* x = static_cast<const typename T::XBlock*>(xp);
  const int64_t nb = n / kQK;
  const float* f16 = fp16_table();
  VF acc[kAcc][R];
  V1 accm[kAcc][R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int a = 0; a < kAcc; ++a) {
      acc[a][r] = hn::Zero(DF());
      accm[a][r] = hn::Zero(D1());
    }
  }
  int64_t ib = 0;
  // With several rows in flight the hardware prefetcher sees R interleaved streams and
  // falls behind on weights streamed from DRAM; prefetch the next R rows as one sequential
  // stream, spread evenly over this group's blocks.
  const uint8_t* next = w + R * stride;
  constexpr size_t kStep = R * kAcc * sizeof(typename T::Block);
  for (; ib + kAcc <= nb; ib += kAcc) {
    if constexpr (R > 1) {
      const uint8_t* p = next + static_cast<size_t>(ib / kAcc) * kStep;
      for (size_t o = 0; o < kStep; o += 64) hwy::Prefetch(p + o);
    }
#pragma GCC unroll 4
    for (int a = 0; a < kAcc; ++a) {
      BlockStep<T, R>(w, stride, ib + a, x[ib + a], f16, acc[a], accm[a]);
    }
  }
#pragma GCC unroll 4
  for (int a = 0; a + 1 < kAcc; ++a) {
    if (ib + a < nb) BlockStep<T, R>(w, stride, ib + a, x[ib + a], f16, acc[a], accm[a]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const float sum = ReduceSum(acc[0][r] + acc[1][r]) * (1.0f / T::kScale);
    out[r] = sum + (hn::GetLane(accm[0][r]) + hn::GetLane(accm[1][r]));
  }
}

template <class T>
float Dot(const void* w, const void* x, int64_t n) {
  SF_CHECK(n % kQK == 0, "dot of %lld elements: not whole blocks", static_cast<long long>(n));
  float out;
  DotRowsT<T, 1>(static_cast<const uint8_t*>(w), 0, x, n, &out);
  return out;
}

template <class T>
void DotRows(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  SF_CHECK(n % kQK == 0, "dot of %lld elements: not whole blocks", static_cast<long long>(n));
  const auto* wp = static_cast<const uint8_t*>(w);
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) DotRowsT<T, 4>(wp + r * stride, stride, x, n, out + r);
  for (; r < n_rows; ++r) DotRowsT<T, 1>(wp + r * stride, stride, x, n, out + r);
}

#if HWY_TARGET == HWY_AVX3_DL
// The VNNI path (vnni_q-inl.h) of every format here, which the tiles of this target match
// bit for bit. (Q4_1/Q5_1's m_w * s_x terms go to chains of their own there, in the spirit
// of the one-lane accumulators above.)
template <class T>
float VnniDot(const void* w, const void* x, int64_t n) {
  SF_CHECK(n % kQK == 0, "dot of %lld elements: not whole blocks", static_cast<long long>(n));
  float out;
  VnniDotRowsT<VnniFormat<T>, 1>(static_cast<const uint8_t*>(w), 0,
                                 static_cast<const typename VnniFormat<T>::XBlock*>(x), n / kQK, &out, false);
  return out;
}

template <class T>
void VnniDotRows(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  SF_CHECK(n % kQK == 0, "dot of %lld elements: not whole blocks", static_cast<long long>(n));
  const auto* wp = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const typename VnniFormat<T>::XBlock*>(x);
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) VnniDotRowsT<VnniFormat<T>, 4>(wp + r * stride, stride, xb, n / kQK, out + r, true);
  for (; r < n_rows; ++r) VnniDotRowsT<VnniFormat<T>, 1>(wp + r * stride, stride, xb, n / kQK, out + r, false);
}
#endif

template <class T>
constexpr DotKernel Entry(GgmlType w, GgmlType a) {
#if HWY_TARGET == HWY_AVX3_DL
  if constexpr (kVnni<T>) return DotKernel{w, a, nullptr, &VnniDot<T>, &VnniDotRows<T>};
#endif
  return DotKernel{w, a, nullptr, &Dot<T>, &DotRows<T>};
}

const DotKernel* GetLegacyKernels(size_t* count) {
  using G = GgmlType;
  static constexpr DotKernel kKernels[] = {
      Entry<Q4_0Traits>(G::Q4_0, G::Q8_0), Entry<Q4_1Traits>(G::Q4_1, G::Q8_1), Entry<Q5_0Traits>(G::Q5_0, G::Q8_0),
      Entry<Q5_1Traits>(G::Q5_1, G::Q8_1), Entry<Q8_0Traits>(G::Q8_0, G::Q8_0),
  };
  *count = std::size(kKernels);
  return kKernels;
}

#else  // HWY_SCALAR: the reference kernels are used.

const DotKernel* GetLegacyKernels(size_t* count) {
  *count = 0;
  return nullptr;
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf::quant {

HWY_EXPORT(GetLegacyKernels);

KernelList legacy_dot_kernels(int64_t target) {
  KernelList list;
  list.data = pick_target(HWY_DISPATCH_TABLE(GetLegacyKernels), target)(&list.size);
  return list;
}

}  // namespace sf::quant
#endif  // HWY_ONCE
