// SIMD activation quantisers (Q8_0, Q8_1, Q8_K). They must write exactly the bytes of the
// scalar quantize_row: the scale is computed in scalar code from the (exact) vector max, the
// element products x * id are the same IEEE multiplications, and the roundings match
// (roundf = ties away from zero for Q8_0/Q8_1, ties to even for Q8_K). Contraction is off:
// fusing x * id into the rounding fix-up's subtraction would skip a rounding step.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <cmath>
#include <cstring>

#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/kernel_registry.h"
#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/quantize_act_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "quant/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

using DI = hn::Rebind<int32_t, DF>;
using D8 = hn::Rebind<int8_t, DF>;
inline constexpr size_t kLF = hn::MaxLanes(DF());

// roundf(v): Round() ties to even, so fix up exact halves by hand.
HWY_INLINE VF RoundHalfAway(VF v) {
  const DF df;
  const VF t = hn::Trunc(v);
  const auto half_or_more = hn::Abs(v - t) >= hn::Set(df, 0.5f);
  return t + hn::IfThenElseZero(half_or_more, hn::CopySign(hn::Set(df, 1.0f), v));
}

HWY_INLINE float AbsMax(const float* x, size_t n) {
  const DF df;
  VF m = hn::Zero(df);
  for (size_t j = 0; j < n; j += kLF) m = hn::Max(m, hn::Abs(hn::LoadU(df, x + j)));
  return hn::GetLane(hn::MaxOfLanes(df, m));
}

// Writes q = roundf(x * id) for 32 elements; returns sum(q).
HWY_INLINE int32_t QuantizeBlock32(const float* x, float id, int8_t* qs) {
  const DF df;
  const DI di;
  const D8 d8;
  const VF vid = hn::Set(df, id);
  auto sum = hn::Zero(di);
  for (size_t j = 0; j < 32; j += kLF) {
    const auto q = hn::ConvertTo(di, RoundHalfAway(hn::LoadU(df, x + j) * vid));
    sum = sum + q;
    hn::StoreU(hn::DemoteTo(d8, q), d8, qs + j);
  }
  return hn::GetLane(hn::SumOfLanes(di, sum));
}

void QuantizeQ8_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    const float d = AbsMax(x, kQK) / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    QuantizeBlock32(x, id, y[i].qs);
  }
}

void QuantizeQ8_1(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    const float d = AbsMax(x, kQK) / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    const int32_t sum = QuantizeBlock32(x, id, y[i].qs);
    y[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
  }
}

void QuantizeQ8_K(const float* x, void* dst, int64_t n) {
  const DF df;
  const DI di;
  const D8 d8;
  auto* y = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    const float amax = AbsMax(x, kQK_K);
    if (amax == 0.0f) {
      std::memset(&y[i], 0, sizeof(y[i]));
      continue;
    }
    // The scalar search keeps the first element of maximal magnitude; its sign decides the
    // sign of the scale, so find that same element.
    float max = 0.0f;
    for (size_t j = 0; j < kQK_K; j += kLF) {
      const auto hit = hn::Abs(hn::LoadU(df, x + j)) == hn::Set(df, amax);
      if (!hn::AllFalse(df, hit)) {
        max = x[j + static_cast<size_t>(hn::FindFirstTrue(df, hit))];
        break;
      }
    }
    const float iscale = -127.f / max;
    const VF vscale = hn::Set(df, iscale);
    const auto q_max = hn::Set(di, 127);
    for (size_t g = 0; g < 16; ++g) {
      auto sum = hn::Zero(di);
      for (size_t j = 16 * g; j < 16 * g + 16; j += kLF) {
        const auto q = hn::Min(hn::NearestInt(hn::LoadU(df, x + j) * vscale), q_max);
        sum = sum + q;
        hn::StoreU(hn::DemoteTo(d8, q), d8, y[i].qs + j);
      }
      y[i].bsums[g] = static_cast<int16_t>(hn::GetLane(hn::SumOfLanes(di, sum)));
    }
    y[i].d = 1 / iscale;
  }
}

QuantizeFn GetActivationQuantizer(GgmlType type) {
  switch (type) {
    case GgmlType::Q8_0:
      return &QuantizeQ8_0;
    case GgmlType::Q8_1:
      return &QuantizeQ8_1;
    case GgmlType::Q8_K:
      return &QuantizeQ8_K;
    default:
      return nullptr;
  }
}

#else  // HWY_SCALAR: no SIMD, the scalar quantize_row is used.

QuantizeFn GetActivationQuantizer(GgmlType) { return nullptr; }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf::quant {

HWY_EXPORT(GetActivationQuantizer);

QuantizeFn simd_activation_quantizer(GgmlType type, int64_t target) {
  return pick_target(HWY_DISPATCH_TABLE(GetActivationQuantizer), target)(type);
}

std::vector<int64_t> compiled_simd_targets() { return hwy::SupportedAndGeneratedTargets(); }

}  // namespace sf::quant
#endif  // HWY_ONCE
