#include "ops/top_k.h"

#include <algorithm>
#include <cmath>
#include <utility>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/top_k.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace sf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How many of x[0..n) are >= t (NaN entries never are).
int64_t CountAtLeast(const float* x, int64_t n, float t) {
  const hn::ScalableTag<float> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto threshold = hn::Set(d, t);
  int64_t count = 0;
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    count += static_cast<int64_t>(hn::CountTrue(d, hn::Ge(hn::LoadU(d, x + i), threshold)));
  for (; i < n; ++i) count += x[i] >= t ? 1 : 0;
  return count;
}

// Stores the values of x[0..n) that are >= t, and their indices, in index order into
// values and ids, and returns how many. Each needs room for that many plus one vector's
// lanes: a compressed store may write a whole vector.
int64_t CollectAtLeast(const float* x, int64_t n, float t, float* values, int32_t* ids) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto threshold = hn::Set(d, t);
  auto index = hn::Iota(di, 0);
  const auto step = hn::Set(di, static_cast<int32_t>(lanes));
  int64_t count = 0;
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    const auto reach = hn::Ge(v, threshold);
    hn::CompressStore(index, hn::RebindMask(di, reach), di, ids + count);
    count += static_cast<int64_t>(hn::CompressStore(v, reach, d, values + count));
    index = hn::Add(index, step);
  }
  for (; i < n; ++i) {
    if (!(x[i] >= t)) continue;
    values[count] = x[i];
    ids[count++] = static_cast<int32_t>(i);
  }
  return count;
}

size_t FloatLanes() { return hn::Lanes(hn::ScalableTag<float>()); }

// The largest value of x[0..n) (n >= 1, no NaN entries).
float LargestOf(const float* x, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  float m = x[0];
  int64_t i = 0;
  if (n >= lanes) {
    auto v = hn::LoadU(d, x);
    for (i = lanes; i + lanes <= n; i += lanes) v = hn::Max(v, hn::LoadU(d, x + i));
    m = hn::GetLane(hn::MaxOfLanes(d, v));
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

}  // namespace sf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {

HWY_EXPORT(CountAtLeast);
HWY_EXPORT(LargestOf);
HWY_EXPORT(CollectAtLeast);
HWY_EXPORT(FloatLanes);

namespace {
int64_t count_at_least(const float* x, int64_t n, float t) { return HWY_DYNAMIC_DISPATCH(CountAtLeast)(x, n, t); }
}  // namespace

void top_k_indices_ref(const float* x, int64_t n, int k, std::vector<int32_t>* out) {
  out->clear();
  const int64_t keep = std::min<int64_t>(std::max(k, 0), n);
  if (keep == 0) return;
  out->reserve(static_cast<size_t>(keep) + 1);
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (static_cast<int64_t>(out->size()) == keep && !(v > x[out->back()])) continue;
    auto at = std::upper_bound(out->begin(), out->end(), v, [&](float value, int32_t id) { return value > x[id]; });
    out->insert(at, static_cast<int32_t>(i));
    if (static_cast<int64_t>(out->size()) > keep) out->pop_back();
  }
}

void top_k_indices(const float* x, int64_t n, int k, std::vector<int32_t>* out) {
  out->clear();
  const int64_t keep = std::min<int64_t>(std::max(k, 0), n);
  if (keep == 0) return;
  // Every value but NaN is >= -inf.
  if (count_at_least(x, n, -HUGE_VALF) != n) return top_k_indices_ref(x, n, k, out);
  const float largest = HWY_DYNAMIC_DISPATCH(LargestOf)(x, n);
  // A threshold `low` that at least `keep` values reach, and `high` that fewer do (or that
  // ties with it). Widen from the largest value, then bisect until at most keep + 4 reach
  // `low` (or no float lies between the two): those are the candidates, collected and
  // sorted. Every value left out is below all of them, so the first keep are the answer.
  float low = largest, high = largest;
  int64_t at_low = count_at_least(x, n, low);
  float width = std::max(1.0f, std::fabs(largest) * 1e-3f);
  for (int step = 0; at_low < keep; ++step) {
    high = low;
    low = largest - width;
    // With a +inf entry (inf - width is NaN or inf) or a range wider than floats, start from
    // the bottom: every entry reaches -inf.
    if (!(low < high) || step == 64) low = -HUGE_VALF;
    width *= 4;
    at_low = count_at_least(x, n, low);
  }
  // Bisecting costs a vector pass (~35 ns over 512 values); sorting costs more per
  // candidate, so the candidates are cut to little more than keep.
  const int64_t enough = keep + 4;
  for (int step = 0; step < 32 && at_low > enough; ++step) {
    const float mid = low + 0.5f * (high - low);
    if (!(mid > low && mid < high)) break;  // no float between them: the values tie
    const int64_t at_mid = count_at_least(x, n, mid);
    if (at_mid >= keep) {
      low = mid;
      at_low = at_mid;
    } else {
      high = mid;
    }
  }
  // The candidates with their values beside them: the sort compares without indirection.
  thread_local std::vector<float> values;
  thread_local std::vector<int32_t> ids;
  thread_local std::vector<std::pair<float, int32_t>> candidates;
  const size_t room = static_cast<size_t>(at_low) + HWY_DYNAMIC_DISPATCH(FloatLanes)();
  values.resize(room);
  ids.resize(room);
  const int64_t collected = HWY_DYNAMIC_DISPATCH(CollectAtLeast)(x, n, low, values.data(), ids.data());
  candidates.clear();
  for (int64_t i = 0; i < collected; ++i)
    candidates.emplace_back(values[static_cast<size_t>(i)], ids[static_cast<size_t>(i)]);
  const auto before = [](const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::sort(candidates.begin(), candidates.end(), before);
  out->reserve(static_cast<size_t>(keep));
  for (int64_t i = 0; i < keep; ++i) out->push_back(candidates[static_cast<size_t>(i)].second);
}

}  // namespace sf
#endif  // HWY_ONCE
