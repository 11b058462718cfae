#include "ops/attention_simd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/attention_simd.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "base/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace sf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void AxpyF16(float p, const uint16_t* v, float* acc, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const size_t lanes = hn::Lanes(df);
  const auto pv = hn::Set(df, p);
  int64_t d = 0;
  for (; d + static_cast<int64_t>(lanes) <= n; d += static_cast<int64_t>(lanes)) {
    const auto vf = hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(v + d)));
    hn::StoreU(hn::MulAdd(pv, vf, hn::LoadU(df, acc + d)), df, acc + d);
  }
  for (; d < n; ++d) acc[d] += p * fp16_to_fp32(v[d]);
}

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {
HWY_EXPORT(AxpyF16);
void axpy_f16(float p, const uint16_t* v, float* acc, int64_t n) { HWY_DYNAMIC_DISPATCH(AxpyF16)(p, v, acc, n); }
}  // namespace sf
#endif
