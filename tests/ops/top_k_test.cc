// top_k_indices against the insertion it replaces, on the inputs that make selection go
// wrong: ties across the threshold, ties at the maximum, infinities, NaN, k around n, sizes
// around the vector width, and logits of very different scales (its first threshold is a
// width from the maximum).
#include "ops/top_k.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops_test_util.h"

namespace sf {
namespace {

using test::random_floats;

std::vector<int32_t> fast(const std::vector<float>& x, int k) {
  std::vector<int32_t> out;
  top_k_indices(x.data(), static_cast<int64_t>(x.size()), k, &out);
  return out;
}

std::vector<int32_t> ref(const std::vector<float>& x, int k) {
  std::vector<int32_t> out;
  top_k_indices_ref(x.data(), static_cast<int64_t>(x.size()), k, &out);
  return out;
}

TEST(TopK, TheInsertionsIndicesOnRandomValuesOfEveryScale) {
  for (int64_t n : {1, 2, 15, 16, 17, 33, 100, 512, 4099, 32000}) {
    for (float scale : {1e-6f, 1.0f, 30.0f, 1e6f}) {
      const auto x = random_floats(static_cast<size_t>(n), 7 + static_cast<uint32_t>(n), scale);
      for (int k : {1, 2, 8, 32, 64}) {
        const auto want = ref(x, k);
        ASSERT_EQ(static_cast<int64_t>(want.size()), std::min<int64_t>(k, n));
        EXPECT_EQ(fast(x, k), want) << "n " << n << " scale " << scale << " k " << k;
      }
    }
  }
}

TEST(TopK, TiesKeepTheLowerIndexAtTheMaximumAndAcrossTheCut) {
  // Values on a coarse grid: dozens of ties everywhere, including at the k-th value.
  auto x = random_floats(512, 3, 4.0f);
  for (float& v : x) v = std::round(v);
  for (int k : {1, 5, 32, 100}) EXPECT_EQ(fast(x, k), ref(x, k)) << "k " << k;
  // More values tie at the maximum than k: the first k of them, in order.
  std::vector<float> flat(300, 2.0f);
  flat[7] = 1.0f;
  const auto top = fast(flat, 32);
  ASSERT_EQ(top.size(), 32u);
  EXPECT_EQ(top, ref(flat, 32));
  EXPECT_EQ(top[6], 6);
  EXPECT_EQ(top[7], 8) << "index 7 is lower than the tie";
  std::vector<float> all_equal(64, -3.0f);
  EXPECT_EQ(fast(all_equal, 64), ref(all_equal, 64));
}

TEST(TopK, InfinitiesNaNAndDegenerateK) {
  const float inf = std::numeric_limits<float>::infinity();
  auto x = random_floats(200, 5);
  x[10] = inf;
  x[20] = inf;
  x[30] = -inf;
  EXPECT_EQ(fast(x, 8), ref(x, 8)) << "+inf entries first";
  std::vector<float> masked(100, -inf);
  masked[40] = 0.5f;
  masked[60] = 0.25f;
  EXPECT_EQ(fast(masked, 32), ref(masked, 32)) << "fewer finite entries than k";
  auto with_nan = random_floats(300, 9);
  with_nan[100] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(fast(with_nan, 16), ref(with_nan, 16)) << "NaN: the insertion's own answer";
  EXPECT_TRUE(fast(x, 0).empty());
  EXPECT_TRUE(fast(x, -1).empty());
  EXPECT_EQ(fast(x, 1000).size(), x.size()) << "k past n keeps every index";
  EXPECT_EQ(fast(x, 1000), ref(x, 1000));
}

}  // namespace
}  // namespace sf
