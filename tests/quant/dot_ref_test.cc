// The reference kernels against the plain definition: dequantise both rows and sum the
// products in double. Error relative to M = sum |w_i x_i|:
//  - float formats: fp32 products, double sum;
//  - quantised formats: an exact integer dot per block, then fp32 scale products and block
//    sums;
// both a few 1e-8 measured (129 blocks at most), bounded at 3e-7;
//  - Q4_1/Q5_1: the weight offset m meets the Q8_1 block's s = d * sum(x), which the format
//    stores in fp16 (ggml's choice), so the offset term carries a 2^-11 relative error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "quant/dot_kernel.h"
#include "quant_test_util.h"

namespace sf {
namespace {

struct RefCase {
  GgmlType weight, activation;
  double max_relative_error;  // |ref - exact| / M; measured worst case (this test) in ()
};

const RefCase kCases[] = {
    {GgmlType::F32, GgmlType::F32, 3e-7},    // (1.1e-8)
    {GgmlType::F16, GgmlType::F16, 3e-7},    // (7.4e-9)
    {GgmlType::F16, GgmlType::F32, 3e-7},    // (1.3e-8)
    {GgmlType::BF16, GgmlType::BF16, 3e-7},  // (7.3e-9)
    {GgmlType::BF16, GgmlType::F32, 3e-7},   // (2.6e-8)
    {GgmlType::Q4_0, GgmlType::Q8_0, 3e-7},  // (1.2e-8)
    {GgmlType::Q5_0, GgmlType::Q8_0, 3e-7},  // (1.8e-8)
    {GgmlType::Q8_0, GgmlType::Q8_0, 3e-7},  // (1.4e-8)
    {GgmlType::Q4_1, GgmlType::Q8_1, 1e-3},  // (1.5e-4) fp16 s
    {GgmlType::Q5_1, GgmlType::Q8_1, 1e-3},  // (1.6e-4) fp16 s
    {GgmlType::Q2_K, GgmlType::Q8_K, 3e-7},  // (1.3e-8)
    {GgmlType::Q3_K, GgmlType::Q8_K, 3e-7},  // (6.0e-9)
    {GgmlType::Q4_K, GgmlType::Q8_K, 3e-7},  // (1.6e-8)
    {GgmlType::Q5_K, GgmlType::Q8_K, 3e-7},  // (2.7e-8)
    {GgmlType::Q6_K, GgmlType::Q8_K, 3e-7},  // (3.7e-9)
};

TEST(DotReference, MatchesDequantizedDoubleDot) {
  for (const RefCase& c : kCases) {
    const DotKernel* ref = find_dot_kernel_ref(c.weight, c.activation);
    ASSERT_NE(ref, nullptr) << type_name(c.weight);
    const int64_t block = std::max(type_info(c.weight).block_size, type_info(c.activation).block_size);
    const int64_t unit = block == 1 ? 32 : block;
    double worst = 0;
    for (int64_t blocks : {1, 3, 7, 33, 129}) {
      for (uint32_t seed : {5u, 6u, 7u}) {
        const int64_t n = blocks * unit;
        const auto wf = test::random_row(n, seed * 31u + static_cast<uint32_t>(n), 0.05f);
        const auto xf = test::random_row(n, seed * 37u + static_cast<uint32_t>(n), 3.0f);
        const auto w = test::quantized(c.weight, wf);
        std::vector<uint8_t> a(row_bytes(c.activation, n));
        ref->quantize_activation(xf.data(), a.data(), n);
        const auto wd = test::dequantized(c.weight, w, n);
        const auto ad = test::dequantized(c.activation, a, n);
        double exact = 0, m = 0;
        for (int64_t i = 0; i < n; ++i) {
          exact += static_cast<double>(wd[i]) * ad[i];
          m += std::fabs(static_cast<double>(wd[i]) * ad[i]);
        }
        const double err = std::fabs(ref->dot(w.data(), a.data(), n) - exact) / m;
        worst = std::max(worst, err);
        EXPECT_LE(err, c.max_relative_error) << type_name(c.weight) << " n=" << n;
      }
    }
    std::printf("%-5s x %-5s ref vs exact: worst %.2g (bound %.2g)\n", type_name(c.weight), type_name(c.activation),
                worst, c.max_relative_error);
  }
}

// The activation quantisers of the reference table are quantize_row itself.
TEST(DotReference, ActivationFormatIsQuantizeRow) {
  for (const RefCase& c : kCases) {
    const DotKernel* ref = find_dot_kernel_ref(c.weight, c.activation);
    const int64_t n = 2 * std::max<int64_t>(32, type_info(c.activation).block_size);
    const auto x = test::random_row(n, 3);
    std::vector<uint8_t> a(row_bytes(c.activation, n)), b(a.size());
    ref->quantize_activation(x.data(), a.data(), n);
    quantize_row(c.activation, x.data(), b.data(), n);
    EXPECT_EQ(a, b) << type_name(c.activation);
  }
}

}  // namespace
}  // namespace sf
