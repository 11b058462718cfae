// The multi-row tile kernels: bit-identical to the one-row dot of the same instruction set
// for every (weight row, activation row) on odd sizes, row counts and tile remainders, and
// close to the scalar reference.
#include "quant/dot_tile.h"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "quant/dot_kernel.h"
#include "quant_test_util.h"

namespace sf {
namespace {

TEST(DotTile, LegacyFormatsWithoutMinimumAndKQuantsHaveTiles) {
  EXPECT_TRUE(find_dot_tile(GgmlType::Q4_0, GgmlType::Q8_0));
  EXPECT_TRUE(find_dot_tile(GgmlType::Q5_0, GgmlType::Q8_0));
  EXPECT_TRUE(find_dot_tile(GgmlType::Q8_0, GgmlType::Q8_0));
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    EXPECT_TRUE(find_dot_tile(type, GgmlType::Q8_K)) << type_name(type);
    EXPECT_FALSE(find_dot_tile(type, GgmlType::Q8_0)) << type_name(type);
  }
  EXPECT_FALSE(find_dot_tile(GgmlType::Q4_1, GgmlType::Q8_1));
  EXPECT_FALSE(find_dot_tile(GgmlType::Q4_0, GgmlType::Q8_K));
  EXPECT_FALSE(find_dot_tile(GgmlType::F16, GgmlType::F16));
  EXPECT_FALSE(find_dot_tile(GgmlType::Q4_0, GgmlType::F32));
}

// Runs a tile as matmul does: through its own activation layout when it has one.
void run_tile(const DotTile& tile, const uint8_t* w, size_t w_stride, int64_t n_rows, const uint8_t* x, size_t x_stride,
              int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  if (!tile.prepare) {
    tile.run(w, w_stride, n_rows, x, x_stride, n_act, n, out, out_stride);
    return;
  }
  std::vector<uint8_t> prepared(tile.prepared_bytes(n_act, n));
  tile.prepare(x, x_stride, n_act, n, prepared.data());
  tile.run(w, w_stride, n_rows, prepared.data(), x_stride, n_act, n, out, out_stride);
}

// Every tile of (weight type, activation type) on every compiled target against that
// target's dot, bit for bit, and against the scalar reference: 1..13 weight rows x 1..35
// activation rows (every remainder of the row and activation tiles) for each n of `sizes`.
void check_tiles_on_every_target(GgmlType type, GgmlType act_type, std::initializer_list<int64_t> sizes) {
  for (int64_t target : dot_kernel_targets()) {
    const DotTile tile = find_dot_tile_for_target(type, act_type, target);
    if (!tile) {
      EXPECT_EQ(dot_kernel_target_name(target), "SCALAR") << type_name(type);
      continue;
    }
    const DotKernel* kernel = find_dot_kernel_for_target(type, act_type, target);
    const DotKernel* ref = find_dot_kernel_ref(type, act_type);
    ASSERT_NE(kernel, nullptr);
    ASSERT_NE(ref, nullptr);
    for (int64_t n : sizes) {
      // Up to 35 activation rows: the VNNI tiles put 16 side by side, so 16, 17 and 35
      // cover full, partial and several panels.
      const int64_t max_rows = 13, max_act = 35;
      const size_t w_stride = row_bytes(type, n), x_stride = row_bytes(act_type, n);
      std::vector<uint8_t> w(w_stride * max_rows), x(x_stride * max_act);
      for (int64_t r = 0; r < max_rows; ++r) {
        const auto q = test::quantized(type, test::random_row(n, static_cast<uint32_t>(n * 100 + r), 0.05f));
        std::memcpy(w.data() + r * w_stride, q.data(), w_stride);
      }
      for (int64_t c = 0; c < max_act; ++c) {
        const auto f = test::random_row(n, static_cast<uint32_t>(n * 1000 + c + 7), 2.0f);
        kernel->quantize_activation(f.data(), x.data() + c * x_stride, n);
      }
      for (int64_t n_rows : {1, 2, 3, 4, 5, 8, 13}) {
        for (int64_t n_act : {1, 2, 3, 4, 5, 6, 7, 9, 16, 17, 35}) {
          const int64_t out_stride = n_rows + 3;  // a stride wider than the rows written
          std::vector<float> out(out_stride * n_act, -1.0f);
          run_tile(tile, w.data(), w_stride, n_rows, x.data(), x_stride, n_act, n, out.data(), out_stride);
          std::vector<float> want, want_ref, got;
          for (int64_t c = 0; c < n_act; ++c) {
            for (int64_t r = 0; r < n_rows; ++r) {
              const float d = kernel->dot(w.data() + r * w_stride, x.data() + c * x_stride, n);
              ASSERT_EQ(test::float_bits(out[c * out_stride + r]), test::float_bits(d))
                  << dot_kernel_target_name(target) << " " << type_name(type) << " n=" << n << " rows=" << n_rows
                  << " act=" << n_act << " (" << r << "," << c << ")";
              want.push_back(d);
              want_ref.push_back(ref->dot(w.data() + r * w_stride, x.data() + c * x_stride, n));
              got.push_back(out[c * out_stride + r]);
            }
            for (int64_t r = n_rows; r < out_stride; ++r) ASSERT_EQ(out[c * out_stride + r], -1.0f);
          }
          EXPECT_LT(test::relative_rmse(want_ref, got), 1e-5) << type_name(type) << " n=" << n;
        }
      }
    }
  }
}

TEST(DotTile, BitIdenticalToDotAndCloseToReferenceOnEveryTarget) {
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0}) {
    check_tiles_on_every_target(type, GgmlType::Q8_0, {32, 64, 96, 160, 2080});
  }
}

// The K-quant tiles: one to four super-blocks (odd and even counts) and a long row.
TEST(DotTile, KQuantTilesBitIdenticalToDotAndCloseToReferenceOnEveryTarget) {
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    check_tiles_on_every_target(type, GgmlType::Q8_K, {256, 512, 768, 1024, 2816});
  }
}

}  // namespace
}  // namespace sf
