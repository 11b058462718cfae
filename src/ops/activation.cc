#include "ops/activation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/activation.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "hwy/contrib/math/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One vector of SwiGLU: g / (1 + exp(-g)) * u. exp's argument is capped at 88 (its result
// then ~1.7e38, and g / that is ~0, as with an infinite exp), inside Highway's valid range.
template <class D, class V>
HWY_INLINE V SwigluVec(D d, V g, V u) {
  const V e = hn::Exp(d, hn::Min(hn::Neg(g), hn::Set(d, 88.0f)));
  return hn::Mul(hn::Div(g, hn::Add(hn::Set(d, 1.0f), e)), u);
}

void Swiglu(float* gate, const float* up, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(SwigluVec(d, hn::LoadU(d, gate + i), hn::LoadU(d, up + i)), d, gate + i);
  if (i == n) return;
  // The last n % lanes elements go through the same vector code (padded), so an element's
  // value never depends on where a vector boundary falls: a batch of rows computes exactly
  // what each row alone does.
  HWY_ALIGN float g[hn::MaxLanes(d)] = {}, u[hn::MaxLanes(d)] = {};
  std::copy(gate + i, gate + n, g);
  std::copy(up + i, up + n, u);
  hn::Store(SwigluVec(d, hn::Load(d, g), hn::Load(d, u)), d, g);
  std::copy(g, g + (n - i), gate + i);
}

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {

HWY_EXPORT(Swiglu);

void swiglu_inplace(float* gate, const float* up, int64_t n) { HWY_DYNAMIC_DISPATCH(Swiglu)(gate, up, n); }

void swiglu_inplace_ref(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void softmax_inplace(float* x, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = x[i] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(x[i] - max);
    x[i] = e;
    sum += e;
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace sf
#endif  // HWY_ONCE
