// Row panels (quant/row_panels.h) and their kernels (quant/dot_panel.h): the layout keeps
// every byte of every row, and the kernel gives, for every batch size, exactly the floats
// the same target's one-row dot gives on the rows in GGUF order.
#include "quant/row_panels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hwy/targets.h"
#include "quant/dot_kernel.h"
#include "quant/dot_panel.h"
#include "quant_test_util.h"

namespace sf {
namespace {

// The formats with the layout, their activation format and row lengths to test: one to a
// few blocks (counts below and above the kernels' unrolling) and a long row.
struct PanelFormat {
  GgmlType type, act_type;
  std::vector<int64_t> sizes;
};
const std::vector<PanelFormat>& panel_formats() {
  static const std::vector<PanelFormat> formats = {
      {GgmlType::Q4_0, GgmlType::Q8_0, {32, 96, 288, 2080}}, {GgmlType::Q4_1, GgmlType::Q8_1, {32, 96, 288, 2080}},
      {GgmlType::Q5_0, GgmlType::Q8_0, {32, 96, 288, 2080}}, {GgmlType::Q5_1, GgmlType::Q8_1, {32, 96, 288, 2080}},
      {GgmlType::Q8_0, GgmlType::Q8_0, {32, 96, 288, 2080}}, {GgmlType::Q2_K, GgmlType::Q8_K, {256, 768, 2816}},
      {GgmlType::Q3_K, GgmlType::Q8_K, {256, 768, 2816}},    {GgmlType::Q4_K, GgmlType::Q8_K, {256, 768, 2816}},
      {GgmlType::Q5_K, GgmlType::Q8_K, {256, 768, 2816}},    {GgmlType::Q6_K, GgmlType::Q8_K, {256, 768, 2816}},
  };
  return formats;
}

// rows x n weights, row-major (GGUF order).
std::vector<uint8_t> weight_rows(GgmlType type, int64_t rows, int64_t n) {
  const size_t stride = row_bytes(type, n);
  std::vector<uint8_t> w(stride * rows);
  for (int64_t r = 0; r < rows; ++r) {
    const auto q = test::quantized(type, test::random_row(n, static_cast<uint32_t>(n * 10 + r), 0.05f));
    std::memcpy(w.data() + r * stride, q.data(), stride);
  }
  return w;
}

TEST(RowPanels, EveryBlockQuantisedWeightTypeHasTheLayoutAndNoFloatType) {
  int with_layout = 0;
  for (GgmlType type : test::all_types()) {
    const bool is_float = type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16;
    const bool activation_only = type == GgmlType::Q8_1 || type == GgmlType::Q8_K;  // never weights
    EXPECT_EQ(has_row_panel_layout(type), !is_float && !activation_only) << type_name(type);
    with_layout += has_row_panel_layout(type);
  }
  EXPECT_EQ(with_layout, static_cast<int>(panel_formats().size()));  // and each is tested below
}

TEST(RowPanels, PackingMovesEveryByteAndUnpackingGivesEachRowBack) {
  for (const PanelFormat& f : panel_formats()) {
    for (int64_t n : f.sizes) {
      const int64_t rows = 48;  // three panels
      const size_t stride = row_bytes(f.type, n);
      const std::vector<uint8_t> original = weight_rows(f.type, rows, n);
      std::vector<uint8_t> packed = original;
      pack_row_panels(f.type, packed.data(), rows, n);
      EXPECT_NE(packed, original) << type_name(f.type) << " n=" << n;  // the layout really changed
      std::vector<uint8_t> row(stride);
      for (int64_t r = 0; r < rows; ++r) {
        unpack_panel_row(f.type, packed.data(), r, n, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), original.data() + r * stride, stride))
            << type_name(f.type) << " n=" << n << " row " << r;
      }
    }
  }
}

// The file layout of `pack --row-panels` on a CPU without the kernel: a whole matrix turned
// back into GGUF's rows in place, every byte where it was.
TEST(RowPanels, UnpackingInPlaceRestoresTheRows) {
  for (const PanelFormat& f : panel_formats()) {
    for (int64_t n : f.sizes) {
      const int64_t rows = 48;
      const std::vector<uint8_t> original = weight_rows(f.type, rows, n);
      std::vector<uint8_t> bytes = original;
      pack_row_panels(f.type, bytes.data(), rows, n);
      ASSERT_NE(bytes, original);
      unpack_row_panels(f.type, bytes.data(), rows, n);
      EXPECT_EQ(bytes, original) << type_name(f.type) << " n=" << n;
    }
  }
}

// A CPU with AVX512-VNNI must have the kernel (so the tests below cannot pass by skipping
// everything on the machine that uses the layout); every other target has none.
TEST(PanelTile, ExistsExactlyOnAvx3Dl) {
  for (int64_t target : dot_kernel_targets()) {
    for (const PanelFormat& f : panel_formats()) {
      const bool has = static_cast<bool>(find_panel_tile_for_target(f.type, f.act_type, target));
      EXPECT_EQ(has, target == HWY_AVX3_DL) << dot_kernel_target_name(target) << " " << type_name(f.type);
    }
    EXPECT_FALSE(find_panel_tile_for_target(GgmlType::Q8_0, GgmlType::Q8_K, target));
    EXPECT_FALSE(find_panel_tile_for_target(GgmlType::Q4_0, GgmlType::Q8_K, target));
    EXPECT_FALSE(find_panel_tile_for_target(GgmlType::Q4_1, GgmlType::Q8_0, target));
    EXPECT_FALSE(find_panel_tile_for_target(GgmlType::F16, GgmlType::F16, target));
  }
  if (hwy::SupportedTargets() & HWY_AVX3_DL) {
    for (const PanelFormat& f : panel_formats()) EXPECT_TRUE(find_panel_tile(f.type, f.act_type)) << type_name(f.type);
  }
}

// 1..5 panels (the batch kernel's groups of three and both remainders) x 1..13, 16, 17 and
// 35 activation rows (every remainder of the kernels' passes over activation rows, and more
// than one of the batch kernel's groups of 16), block counts that are not multiples of the
// kernels' unrolling, each output against the target's dot on the GGUF rows, bit for bit,
// and close to the scalar reference.
TEST(PanelTile, BitIdenticalToDotOnTheRowsAndCloseToReference) {
  std::vector<int64_t> act_counts;
  for (int64_t a = 1; a <= 13; ++a) act_counts.push_back(a);
  for (int64_t a : {16, 17, 35}) act_counts.push_back(a);
  const int64_t max_act = act_counts.back();
  for (int64_t target : dot_kernel_targets()) {
    for (const PanelFormat& f : panel_formats()) {
      const DotTile tile = find_panel_tile_for_target(f.type, f.act_type, target);
      if (!tile) continue;
      const DotKernel* kernel = find_dot_kernel_for_target(f.type, f.act_type, target);
      const DotKernel* ref = find_dot_kernel_ref(f.type, f.act_type);
      ASSERT_NE(kernel, nullptr);
      ASSERT_NE(ref, nullptr);
      for (int64_t n : f.sizes) {
        const size_t w_stride = row_bytes(f.type, n), x_stride = row_bytes(f.act_type, n);
        std::vector<uint8_t> x(x_stride * max_act);
        for (int64_t c = 0; c < max_act; ++c) {
          const auto v = test::random_row(n, static_cast<uint32_t>(n * 1000 + c + 7), 2.0f);
          kernel->quantize_activation(v.data(), x.data() + c * x_stride, n);
        }
        for (int64_t n_panels = 1; n_panels <= 5; ++n_panels) {
          const int64_t rows = n_panels * kRowPanelRows;
          const std::vector<uint8_t> w = weight_rows(f.type, rows, n);
          std::vector<uint8_t> panels = w;
          pack_row_panels(f.type, panels.data(), rows, n);
          // Two panel counts see every activation-row count, the others a few.
          for (int64_t n_act : act_counts) {
            if (n_panels != 2 && n_panels != 5 && n_act != 5 && n_act != max_act) continue;
            const int64_t out_stride = rows + 5;  // wider than the rows written
            std::vector<float> out(out_stride * n_act, -1.0f);
            std::vector<uint8_t> prepared(tile.prepared_bytes(n_act, n));
            tile.prepare(x.data(), x_stride, n_act, n, prepared.data());
            tile.run(panels.data(), w_stride, rows, prepared.data(), x_stride, n_act, n, out.data(), out_stride);
            std::vector<float> want_ref, got;
            for (int64_t c = 0; c < n_act; ++c) {
              for (int64_t r = 0; r < rows; ++r) {
                const float d = kernel->dot(w.data() + r * w_stride, x.data() + c * x_stride, n);
                ASSERT_EQ(test::float_bits(out[c * out_stride + r]), test::float_bits(d))
                    << dot_kernel_target_name(target) << " " << type_name(f.type) << " n=" << n
                    << " panels=" << n_panels << " act=" << n_act << " (" << r << "," << c << ")";
                want_ref.push_back(ref->dot(w.data() + r * w_stride, x.data() + c * x_stride, n));
                got.push_back(out[c * out_stride + r]);
              }
              for (int64_t r = rows; r < out_stride; ++r) ASSERT_EQ(out[c * out_stride + r], -1.0f);
            }
            EXPECT_LT(test::relative_rmse(want_ref, got), 1e-5) << type_name(f.type) << " n=" << n;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace sf
