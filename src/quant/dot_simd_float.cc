// SIMD dot kernels for the float formats: F32 x F32, F16 x F16, F16 x F32, BF16 x BF16,
// BF16 x F32. Halves are widened to fp32 (vcvtph2ps / shift for bf16) and accumulated with
// FMA in four independent fp32 accumulators; a scalar loop finishes the last n % lanes.
#include <cstring>

#include "base/fp16.h"
#include "quant/kernel_registry.h"
#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/dot_simd_float.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "quant/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

struct F32 {
  using T = float;
  static HWY_INLINE VF Load(const T* p) { return hn::LoadU(DF(), p); }
  static float Scalar(T v) { return v; }
};
struct F16 {
  using T = hwy::float16_t;
  static HWY_INLINE VF Load(const T* p) {
    const hn::Rebind<T, DF> dh;
    return hn::PromoteTo(DF(), hn::LoadU(dh, p));
  }
  static float Scalar(T v) {
    uint16_t bits;
    std::memcpy(&bits, &v, 2);
    return fp16_to_fp32(bits);
  }
};
struct BF16 {
  using T = hwy::bfloat16_t;
  static HWY_INLINE VF Load(const T* p) {
    const hn::Rebind<T, DF> dh;
    return hn::PromoteTo(DF(), hn::LoadU(dh, p));
  }
  static float Scalar(T v) {
    uint16_t bits;
    std::memcpy(&bits, &v, 2);
    return bf16_to_fp32(bits);
  }
};

template <class W, class X>
float Dot(const void* wp, const void* xp, int64_t n) {
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
  float sum = ReduceSum((a0 + a1) + (a2 + a3));
  for (; i < n; ++i) sum += W::Scalar(w[i]) * X::Scalar(x[i]);
  return sum;
}

template <class W, class X>
void DotRows(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) {
    out[r] = Dot<W, X>(static_cast<const uint8_t*>(w) + r * stride, x, n);
  }
}

template <class W, class X>
constexpr DotKernel Entry(GgmlType w, GgmlType a) {
  return DotKernel{w, a, nullptr, &Dot<W, X>, &DotRows<W, X>};
}

const DotKernel* GetFloatKernels(size_t* count) {
  using G = GgmlType;
  static constexpr DotKernel kKernels[] = {
      Entry<F32, F32>(G::F32, G::F32),     Entry<F16, F16>(G::F16, G::F16),   Entry<F16, F32>(G::F16, G::F32),
      Entry<BF16, BF16>(G::BF16, G::BF16), Entry<BF16, F32>(G::BF16, G::F32),
  };
  *count = std::size(kKernels);
  return kKernels;
}

#else  // HWY_SCALAR: the reference kernels are used.

const DotKernel* GetFloatKernels(size_t* count) {
  *count = 0;
  return nullptr;
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf::quant {

HWY_EXPORT(GetFloatKernels);

KernelList float_dot_kernels(int64_t target) {
  KernelList list;
  list.data = pick_target(HWY_DISPATCH_TABLE(GetFloatKernels), target)(&list.size);
  return list;
}

}  // namespace sf::quant
#endif  // HWY_ONCE
