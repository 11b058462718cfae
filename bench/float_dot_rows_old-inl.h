// quant_dot_bench only: the float dot_rows of main before the batched lane sums (commit
// fbffa1b, src/quant/dot_simd_float.cc), kept here as the baseline that `--float-batch` times
// next to the new kernels in the same process: `dot` per row, each with four accumulators and
// hn::SumOfLanes. Re-included once per Highway target through foreach_target.h.
#if defined(SF_BENCH_FLOAT_DOT_ROWS_OLD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_BENCH_FLOAT_DOT_ROWS_OLD_INL_H_
#undef SF_BENCH_FLOAT_DOT_ROWS_OLD_INL_H_
#else
#define SF_BENCH_FLOAT_DOT_ROWS_OLD_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/fp16.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sf_bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

struct OldF32 {
  using T = float;
  static HWY_INLINE VF Load(const T* p) { return hn::LoadU(DF(), p); }
  static float Scalar(T v) { return v; }
};
template <class H, float (*kToF32)(uint16_t)>
struct OldHalf {
  using T = H;
  static HWY_INLINE VF Load(const T* p) {
    const hn::Rebind<T, DF> dh;
    return hn::PromoteTo(DF(), hn::LoadU(dh, p));
  }
  static float Scalar(T v) {
    uint16_t bits;
    std::memcpy(&bits, &v, 2);
    return kToF32(bits);
  }
};
inline float Fp16ToF32(uint16_t h) { return sf::fp16_to_fp32(h); }
inline float Bf16ToF32(uint16_t h) { return sf::bf16_to_fp32(h); }
using OldF16 = OldHalf<hwy::float16_t, &Fp16ToF32>;
using OldBF16 = OldHalf<hwy::bfloat16_t, &Bf16ToF32>;

// Not inlined, as in main's library, where dot_rows calls dot once per row (checked in the
// object code of fbffa1b's dot_simd_float.cc: one call to Dot in each DotRows).
template <class W, class X>
HWY_NOINLINE float OldDot(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const typename W::T*>(wp);
  const auto* x = static_cast<const typename X::T*>(xp);
  constexpr int64_t kL = static_cast<int64_t>(hn::MaxLanes(DF()));
  VF a0 = hn::Zero(DF()), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 * kL <= n; i += 4 * kL) {
    a0 = hn::MulAdd(W::Load(w + i), X::Load(x + i), a0);
    a1 = hn::MulAdd(W::Load(w + i + kL), X::Load(x + i + kL), a1);
    a2 = hn::MulAdd(W::Load(w + i + 2 * kL), X::Load(x + i + 2 * kL), a2);
    a3 = hn::MulAdd(W::Load(w + i + 3 * kL), X::Load(x + i + 3 * kL), a3);
  }
  for (; i + kL <= n; i += kL) a0 = hn::MulAdd(W::Load(w + i), X::Load(x + i), a0);
  float sum = hn::GetLane(hn::SumOfLanes(DF(), (a0 + a1) + (a2 + a3)));
  for (; i < n; ++i) sum += W::Scalar(w[i]) * X::Scalar(x[i]);
  return sum;
}

template <class W, class X>
void OldDotRowsT(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) out[r] = OldDot<W, X>(static_cast<const uint8_t*>(w) + r * stride, x, n);
}

// weight_type: 0 = F32 x F32, 1 = F16 x F16, 2 = BF16 x BF16.
void OldFloatDotRows(int weight_type, const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n,
                     float* out) {
  if (weight_type == 0) OldDotRowsT<OldF32, OldF32>(w, stride, n_rows, x, n, out);
  if (weight_type == 1) OldDotRowsT<OldF16, OldF16>(w, stride, n_rows, x, n, out);
  if (weight_type == 2) OldDotRowsT<OldBF16, OldBF16>(w, stride, n_rows, x, n, out);
}

#else

void OldFloatDotRows(int, const void*, size_t, int64_t, const void*, int64_t, float*) {}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf_bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SF_BENCH_FLOAT_DOT_ROWS_OLD_INL_H_ toggle
