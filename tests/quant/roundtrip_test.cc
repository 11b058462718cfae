// quantize_row then dequantize_row on random rows: the relative RMSE (RMS of the error over
// RMS of the input) stays under a per-type bound. The bounds are the measured worst case over
// the sizes and seeds below, rounded up by ~25%; they are what the formats give, so a layout
// or rounding bug shows up as a jump, not a drift.
#include <gtest/gtest.h>

#include <cstdio>

#include "quant_test_util.h"

namespace sf {
namespace {

struct Bound {
  GgmlType type;
  double max_relative_rmse;
};

// Bound = measured worst case (this test: 1/3/7/33 blocks x 3 seeds, Gaussian with 1% 4x
// outliers) x ~1.25. In parentheses: the worst case measured, then the relative RMSE on
// 16384 pure Gaussian values for comparison with published figures.
constexpr Bound kBounds[] = {
    {GgmlType::F32, 0.0},      // exact
    {GgmlType::F16, 3.5e-4},   // (2.8e-4) 2^-11 relative rounding
    {GgmlType::BF16, 2.5e-3},  // (2.0e-3) 2^-8 relative rounding
    {GgmlType::Q4_0, 0.17},    // (0.135, Gaussian 0.087)
    {GgmlType::Q4_1, 0.125},   // (0.100, 0.079)
    {GgmlType::Q5_0, 0.115},   // (0.091, 0.043)
    {GgmlType::Q5_1, 0.06},    // (0.048, 0.038)
    {GgmlType::Q8_0, 0.0125},  // (0.0101, 0.0054)
    {GgmlType::Q8_1, 0.0125},  // (0.0101)
    {GgmlType::Q2_K, 0.42},    // (0.339, 0.297)
    {GgmlType::Q3_K, 0.25},    // (0.199, 0.152)
    {GgmlType::Q4_K, 0.11},    // (0.087, 0.072)
    {GgmlType::Q5_K, 0.055},   // (0.043, 0.036)
    {GgmlType::Q6_K, 0.03},    // (0.024, 0.018)
    {GgmlType::Q8_K, 0.0185},  // (0.0147, 0.0072) one scale per 256 values: outliers cost
};

TEST(QuantRoundTrip, RelativeRmseWithinBound) {
  for (const Bound& bound : kBounds) {
    const int64_t block = type_info(bound.type).block_size;
    const int64_t base = block == 1 ? 32 : block;  // float types: odd multiples of 32 too
    double worst = 0.0;
    for (int64_t blocks : {1, 3, 7, 33}) {
      for (uint32_t seed : {1u, 2u, 3u}) {
        const int64_t n = blocks * base;
        const auto x = test::random_row(n, seed * 7919u + static_cast<uint32_t>(blocks), 0.02f);
        const auto y = test::dequantized(bound.type, test::quantized(bound.type, x), n);
        const double e = test::relative_rmse(x, y);
        worst = std::max(worst, e);
        EXPECT_LE(e, bound.max_relative_rmse) << type_name(bound.type) << " blocks=" << blocks << " seed=" << seed;
      }
    }
    std::printf("%-5s worst relative RMSE %.3g (bound %.3g)\n", type_name(bound.type), worst, bound.max_relative_rmse);
  }
}

TEST(QuantRoundTrip, ZerosStayZero) {
  for (GgmlType type : test::all_types()) {
    const int64_t n = 3 * std::max<int64_t>(32, type_info(type).block_size);
    const std::vector<float> x(static_cast<size_t>(n), 0.0f);
    const auto y = test::dequantized(type, test::quantized(type, x), n);
    for (float v : y) ASSERT_EQ(v, 0.0f) << type_name(type);
  }
}

// Quantising the decoded values again must reproduce them (a fixed point), for the formats
// whose quantiser maps the block max onto an extreme level exactly.
TEST(QuantRoundTrip, DecodedLegacyBlocksAreFixedPoints) {
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K}) {
    const int64_t n = 7 * type_info(type).block_size;
    const auto x = test::random_row(n, 11, 1.0f);
    const auto y = test::dequantized(type, test::quantized(type, x), n);
    const auto z = test::dequantized(type, test::quantized(type, y), n);
    EXPECT_LE(test::relative_rmse(y, z), 1e-3) << type_name(type);
  }
}

}  // namespace
}  // namespace sf
