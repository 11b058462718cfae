#include "ops/argmax.h"

#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/argmax.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace sf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The largest non-NaN value of x[0..n) (n >= 1, x[0] not NaN) in independent lanes. NaN
// lanes count as -inf: what Max does with a NaN differs between targets (x86 returns its
// second operand, which would drop a lane's running maximum).
float MaxOf(const float* x, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto lowest = hn::Set(d, -HUGE_VALF);
  const auto load = [&](int64_t at) {
    const auto v = hn::LoadU(d, x + at);
    return hn::IfThenElse(hn::IsNaN(v), lowest, v);
  };
  auto m0 = hn::Set(d, x[0]), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    m0 = hn::Max(m0, load(i));
    m1 = hn::Max(m1, load(i + lanes));
  }
  for (; i + lanes <= n; i += lanes) m0 = hn::Max(m0, load(i));
  float m = hn::GetLane(hn::MaxOfLanes(d, hn::Max(m0, m1)));
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// The first index in [0, n) whose value equals `value` (-1: none).
int64_t FirstEqual(const float* x, int64_t n, float value) {
  const hn::ScalableTag<float> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto v = hn::Set(d, value);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const intptr_t at = hn::FindFirstTrue(d, hn::Eq(hn::LoadU(d, x + i), v));
    if (at >= 0) return i + at;
  }
  for (; i < n; ++i)
    if (x[i] == value) return i;
  return -1;
}

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {

HWY_EXPORT(MaxOf);
HWY_EXPORT(FirstEqual);

int32_t argmax_f32(const float* x, int64_t n) {
  // The scalar loop never moves to a NaN entry (no comparison with it is true), and stays
  // on a NaN first one.
  if (n <= 1 || std::isnan(x[0])) return 0;
  const float m = HWY_DYNAMIC_DISPATCH(MaxOf)(x, n);
  // The first entry equal to the maximum is where the scalar loop ends: it moves only to a
  // strictly larger value.
  const int64_t at = HWY_DYNAMIC_DISPATCH(FirstEqual)(x, n, m);
  return static_cast<int32_t>(at >= 0 ? at : 0);
}

int32_t argmax_f32_ref(const float* x, int64_t n) {
  int32_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = static_cast<int32_t>(i);
  return best;
}

}  // namespace sf
#endif  // HWY_ONCE
