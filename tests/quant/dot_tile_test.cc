// The multi-row tile kernels: bit-identical to the one-row dot of the same instruction set
// for every (weight row, activation row) on odd sizes, row counts and tile remainders, and
// close to the scalar reference.
#include "quant/dot_tile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "hwy/targets.h"
#include "quant/dequantize.h"
#include "quant/dot_kernel.h"
#include "quant_test_util.h"

namespace sf {
namespace {

const std::pair<GgmlType, GgmlType> kFloatPairs[] = {{GgmlType::F32, GgmlType::F32},
                                                     {GgmlType::F16, GgmlType::F16},
                                                     {GgmlType::F16, GgmlType::F32},
                                                     {GgmlType::BF16, GgmlType::BF16},
                                                     {GgmlType::BF16, GgmlType::F32}};

TEST(DotTile, LegacyFormatsAndKQuantsHaveTiles) {
  EXPECT_TRUE(find_dot_tile(GgmlType::Q4_0, GgmlType::Q8_0));
  EXPECT_TRUE(find_dot_tile(GgmlType::Q5_0, GgmlType::Q8_0));
  EXPECT_TRUE(find_dot_tile(GgmlType::Q8_0, GgmlType::Q8_0));
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    EXPECT_TRUE(find_dot_tile(type, GgmlType::Q8_K)) << type_name(type);
    EXPECT_FALSE(find_dot_tile(type, GgmlType::Q8_0)) << type_name(type);
  }
  EXPECT_TRUE(find_dot_tile(GgmlType::Q4_1, GgmlType::Q8_1));
  EXPECT_TRUE(find_dot_tile(GgmlType::Q5_1, GgmlType::Q8_1));
  EXPECT_FALSE(find_dot_tile(GgmlType::Q4_1, GgmlType::Q8_0));
  EXPECT_FALSE(find_dot_tile(GgmlType::Q4_0, GgmlType::Q8_1));
  EXPECT_FALSE(find_dot_tile(GgmlType::Q4_0, GgmlType::Q8_K));
  EXPECT_FALSE(find_dot_tile(GgmlType::Q4_0, GgmlType::F32));
  EXPECT_FALSE(find_dot_tile(GgmlType::F32, GgmlType::F16));
  EXPECT_FALSE(find_dot_tile(GgmlType::F16, GgmlType::BF16));
}

// The VNNI K16 tiles (a panel of 16 activation rows costs six to eight one-row dots) come
// with a kernel for the batches under their minimum; without it those ran dot_rows per row.
TEST(DotTile, VnniK16TilesHaveASmallBatchKernel) {
  bool vnni = false;
  for (int64_t target : dot_kernel_targets()) {
    if (dot_kernel_target_name(target) != "AVX3_DL") continue;
    vnni = true;
    for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q6_K}) {
      const DotTile tile = find_dot_tile_for_target(type, GgmlType::Q8_K, target);
      EXPECT_GT(tile.min_act_rows, 2) << type_name(type);
      EXPECT_NE(tile.small_run, nullptr) << type_name(type);
    }
  }
  if (!vnni) GTEST_SKIP() << "no AVX3_DL target on this CPU";
}

// Every legacy format has its VNNI tile (16 activation rows per vector, so it prepares the
// activations) exactly on AVX3_DL, and a CPU with AVX512-VNNI lists that target: the
// bit-identity tests below then cannot pass by skipping the VNNI kernels.
TEST(DotTile, LegacyVnniTilesExistExactlyOnAvx3Dl) {
  const std::pair<GgmlType, GgmlType> kLegacy[] = {{GgmlType::Q4_0, GgmlType::Q8_0},
                                                   {GgmlType::Q4_1, GgmlType::Q8_1},
                                                   {GgmlType::Q5_0, GgmlType::Q8_0},
                                                   {GgmlType::Q5_1, GgmlType::Q8_1},
                                                   {GgmlType::Q8_0, GgmlType::Q8_0}};
  bool listed = false;
  for (int64_t target : dot_kernel_targets()) {
    const bool vnni = target == HWY_AVX3_DL;
    listed |= vnni;
    for (const auto& [w, a] : kLegacy) {
      const DotTile tile = find_dot_tile_for_target(w, a, target);
      EXPECT_EQ(tile.prepare != nullptr, vnni) << type_name(w) << " on " << dot_kernel_target_name(target);
    }
  }
  EXPECT_EQ(listed, (hwy::SupportedTargets() & HWY_AVX3_DL) != 0);
}

TEST(DotTile, FloatPairsHaveTilesOnEverySimdTarget) {
  for (int64_t target : dot_kernel_targets()) {
    const bool scalar = dot_kernel_target_name(target) == "SCALAR";
    for (const auto& [w, a] : kFloatPairs) {
      EXPECT_EQ(static_cast<bool>(find_dot_tile_for_target(w, a, target)), !scalar)
          << type_name(w) << " x " << type_name(a) << " on " << dot_kernel_target_name(target);
    }
  }
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

// sum |w_i x_i| over the decoded rows: the scale of a rounding error in a sum that may cancel.
double magnitude(GgmlType wt, const uint8_t* w, GgmlType at, const uint8_t* x, int64_t n) {
  std::vector<float> wf(static_cast<size_t>(n)), xf(static_cast<size_t>(n));
  dequantize_row(wt, w, wf.data(), n);
  dequantize_row(at, x, xf.data(), n);
  double m = 0;
  for (int64_t i = 0; i < n; ++i) m += std::fabs(static_cast<double>(wf[i]) * xf[i]);
  return m;
}

// The RMS error against the RMS of the sums' magnitudes (sum |w_i x_i|), not of the results:
// a lone result near zero (heavy cancellation) makes any other summation order look like a
// large relative error. NEON's 4-lane order is 3.5e-8 off a Q2_K result of 6.1e-4 whose terms
// sum to ~1,000x that: 5.8e-5 relative to the result, rounding against its terms.
double rmse_against_magnitudes(const std::vector<float>& ref, const std::vector<float>& got,
                               const std::vector<double>& magnitudes) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    err += d * d;
    norm += magnitudes[i] * magnitudes[i];
  }
  return norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
}

struct TileShapes {
  std::vector<int64_t> rows = {1, 2, 3, 4, 5, 8, 13};
  std::vector<int64_t> acts = {1, 2, 3, 4, 5, 6, 7, 9, 16, 17, 35};
  // When > 0: also |tile - reference| <= max_error * sum |w_i x_i| for every output (the
  // bound of tests/quant/dot_kernel_test.cc).
  double max_error = 0;
};

// Every tile of (weight type, activation type) on every compiled target against that
// target's dot, bit for bit, and against the scalar reference: each count of `shape.rows`
// weight rows x each count of `shape.acts` activation rows (every remainder of the row and
// activation tiles) for each n of `sizes`.
void check_tiles_on_every_target(GgmlType type, GgmlType act_type, std::initializer_list<int64_t> sizes,
                                 const TileShapes& shape = TileShapes{}) {
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
      const int64_t max_rows = *std::max_element(shape.rows.begin(), shape.rows.end());
      const int64_t max_act = *std::max_element(shape.acts.begin(), shape.acts.end());
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
      // dot, the reference and the error scale of every (weight row, activation row).
      std::vector<float> dot(max_rows * max_act), dot_ref(dot.size());
      std::vector<double> scale(dot.size());
      for (int64_t c = 0; c < max_act; ++c) {
        for (int64_t r = 0; r < max_rows; ++r) {
          const uint8_t* wr = w.data() + r * w_stride;
          const uint8_t* xc = x.data() + c * x_stride;
          dot[c * max_rows + r] = kernel->dot(wr, xc, n);
          dot_ref[c * max_rows + r] = ref->dot(wr, xc, n);
          scale[c * max_rows + r] = magnitude(type, wr, act_type, xc, n);
        }
      }
      // The tile, and its kernel for small batches where it has one (on every count of
      // activation rows, though matmul uses it only under min_act_rows).
      std::vector<std::pair<const char*, DotTile>> variants = {{"tile", tile}};
      if (tile.small_run) variants.push_back({"small_run", DotTile{tile.small_run}});
      for (const auto& [variant, run] : variants) {
        for (int64_t n_rows : shape.rows) {
          for (int64_t n_act : shape.acts) {
            const int64_t out_stride = n_rows + 3;  // a stride wider than the rows written
            std::vector<float> out(out_stride * n_act, -1.0f);
            run_tile(run, w.data(), w_stride, n_rows, x.data(), x_stride, n_act, n, out.data(), out_stride);
            std::vector<float> want_ref, got;
            std::vector<double> magnitudes;
            for (int64_t c = 0; c < n_act; ++c) {
              for (int64_t r = 0; r < n_rows; ++r) {
                const float d = dot[c * max_rows + r], o = out[c * out_stride + r];
                ASSERT_EQ(test::float_bits(o), test::float_bits(d))
                    << dot_kernel_target_name(target) << " " << variant << " " << type_name(type) << " x "
                    << type_name(act_type) << " n=" << n << " rows=" << n_rows << " act=" << n_act << " (" << r << ","
                    << c << ")";
                want_ref.push_back(dot_ref[c * max_rows + r]);
                got.push_back(o);
                magnitudes.push_back(scale[c * max_rows + r]);
                if (shape.max_error > 0) {
                  ASSERT_LE(std::fabs(static_cast<double>(o) - want_ref.back()),
                            shape.max_error * scale[c * max_rows + r] + 1e-30)
                      << dot_kernel_target_name(target) << " " << type_name(type) << " x " << type_name(act_type)
                      << " n=" << n << " (" << r << "," << c << ")";
                }
              }
              for (int64_t r = n_rows; r < out_stride; ++r) ASSERT_EQ(out[c * out_stride + r], -1.0f);
            }
            EXPECT_LT(rmse_against_magnitudes(want_ref, got, magnitudes), 1e-6)
                << dot_kernel_target_name(target) << " " << variant << " " << type_name(type) << " n=" << n
                << " rows=" << n_rows << " act=" << n_act;
          }
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

// Q4_1 and Q5_1: the minimum terms' accumulators (even and odd blocks) too; 1-17 weight rows
// and up to 37 (every remainder of the 4-row tiles).
TEST(DotTile, MinimumFormatTilesBitIdenticalToDotAndCloseToReferenceOnEveryTarget) {
  TileShapes shape;
  shape.rows = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 37};
  shape.acts = {1, 2, 3, 4, 5, 6, 7, 9, 16, 17, 35};
  for (GgmlType type : {GgmlType::Q4_1, GgmlType::Q5_1}) {
    check_tiles_on_every_target(type, GgmlType::Q8_1, {32, 64, 96, 160, 2080}, shape);
  }
}

// The K-quant tiles: one to four super-blocks (odd and even counts) and a long row.
TEST(DotTile, KQuantTilesBitIdenticalToDotAndCloseToReferenceOnEveryTarget) {
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    check_tiles_on_every_target(type, GgmlType::Q8_K, {256, 512, 768, 1024, 2816});
  }
}

// The float tiles: n of one element to over a thousand, whole and partial vectors and
// four-vector groups of every target (4, 8, 16 lanes), with and without a scalar tail
// (K = 64 and 172: stories260K's matrices); 1-17 weight rows (every remainder of the 4-row
// tiles and 8-row dot_rows blocks) and up to 37, 1-9 activation rows and up to 35.
TEST(DotTile, FloatTilesBitIdenticalToDotAndCloseToReferenceOnEveryTarget) {
  TileShapes shape;
  shape.rows = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 31, 32, 33, 37};
  shape.acts = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 33, 35};
  shape.max_error = 1e-6;
  for (const auto& [type, act_type] : kFloatPairs) {
    check_tiles_on_every_target(type, act_type, {1, 5, 16, 63, 64, 96, 172, 200, 275, 1031}, shape);
  }
}

}  // namespace
}  // namespace sf
