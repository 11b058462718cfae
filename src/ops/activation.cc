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

float ExpSumShifted(const float* x, int64_t n, float shift) {
  const hn::ScalableTag<float> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vshift = hn::Set(d, shift);
  // -inf - shift is -inf, outside Exp's valid range; clamped to -FLT_MAX its exp is 0.
  const auto lowest = hn::Set(d, -std::numeric_limits<float>::max());
  const auto term = [&](auto v) { return hn::Exp(d, hn::Max(hn::Sub(v, vshift), lowest)); };
  auto sum0 = hn::Zero(d), sum1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    sum0 = hn::Add(sum0, term(hn::LoadU(d, x + i)));
    sum1 = hn::Add(sum1, term(hn::LoadU(d, x + i + lanes)));
  }
  for (; i + lanes <= n; i += lanes) sum0 = hn::Add(sum0, term(hn::LoadU(d, x + i)));
  if (i < n) {
    const auto valid = hn::FirstN(d, static_cast<size_t>(n - i));
    HWY_ALIGN float tail[hn::MaxLanes(d)];
    for (int64_t k = 0; k < lanes; ++k) tail[k] = i + k < n ? x[i + k] : shift;
    sum1 = hn::Add(sum1, hn::IfThenElseZero(valid, term(hn::Load(d, tail))));
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(sum0, sum1)));
}

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {

HWY_EXPORT(Swiglu);
HWY_EXPORT(ExpSumShifted);

float exp_sum_shifted(const float* x, int64_t n, float shift) {
  return HWY_DYNAMIC_DISPATCH(ExpSumShifted)(x, n, shift);
}

double exp_sum_shifted_ref(const float* x, int64_t n, float shift) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - shift);
  return sum;
}

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
