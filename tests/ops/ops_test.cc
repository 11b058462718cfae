// The ops against their scalar references, and the batch-invariance property speculative
// decoding relies on: a row's result never depends on the other rows of its batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "base/fp16.h"
#include "ops/activation.h"
#include "ops/argmax.h"
#include "ops/attention.h"
#include "ops/matmul.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "ops_test_util.h"
#include "quant/dequantize.h"

namespace sf {
namespace {

using test::random_floats;

// A quantised weight matrix owning its bytes.
struct OwnedMatrix {
  std::vector<uint8_t> bytes;
  WeightMatrix view;
};

OwnedMatrix make_matrix(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  const auto values = random_floats(static_cast<size_t>(rows * cols), seed, 0.5f);
  OwnedMatrix m;
  const size_t stride = row_bytes(type, cols);
  m.bytes.resize(stride * rows);
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, values.data() + r * cols, m.bytes.data() + r * stride, cols);
  m.view = {type, cols, rows, stride, m.bytes.data()};
  return m;
}

double relative_rms_error(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - want[i]) * static_cast<double>(got[i] - want[i]);
    norm += static_cast<double>(want[i]) * want[i];
  }
  return std::sqrt(err / std::max(norm, 1e-30));
}

// Error bound of the fast matmul vs the double-precision reference on the same weights:
// the fast path quantises activations (Q8_0/Q8_1/Q8_K/F16), which dominates the error.
// Measured worst cases over these sizes: Q8_0-family < 1e-2; the K-quants' Q8_K
// activations (one scale per 256 values) reach ~2.1e-2 on single-row outputs, hence 3e-2.
struct MatmulCase {
  GgmlType type;
  double bound;
};

class MatmulVsReference : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulVsReference, OddSizes) {
  const auto [type, bound] = GetParam();
  const int64_t block = type_info(type).block_size;
  ThreadPool pool(2);
  pool.set_min_chunk_work(1);  // split even these small shapes between the threads
  MatmulScratch scratch;
  for (int64_t cols : {block, 3 * block, 7 * block, block == 1 ? 67 : 9 * block}) {
    for (int64_t rows : {1, 5, 33}) {
      for (int64_t n_tokens : {1, 3}) {
        OwnedMatrix m = make_matrix(type, rows, cols, static_cast<uint32_t>(rows * 31 + cols));
        const auto x = random_floats(static_cast<size_t>(n_tokens * cols), 7);
        std::vector<float> fast(n_tokens * rows), ref(n_tokens * rows);
        matmul(m.view, x.data(), n_tokens, cols, fast.data(), rows, pool, scratch);
        matmul_ref(m.view, x.data(), n_tokens, ref.data());
        EXPECT_LT(relative_rms_error(fast, ref), bound)
            << type_name(type) << " rows=" << rows << " cols=" << cols << " tokens=" << n_tokens;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllWeightTypes, MatmulVsReference,
                         ::testing::Values(MatmulCase{GgmlType::F32, 1e-6}, MatmulCase{GgmlType::F16, 2e-3},
                                           MatmulCase{GgmlType::BF16, 1e-2}, MatmulCase{GgmlType::Q8_0, 1e-2},
                                           MatmulCase{GgmlType::Q4_0, 1e-2}, MatmulCase{GgmlType::Q4_1, 1e-2},
                                           MatmulCase{GgmlType::Q5_0, 1e-2}, MatmulCase{GgmlType::Q5_1, 1e-2},
                                           MatmulCase{GgmlType::Q2_K, 3e-2}, MatmulCase{GgmlType::Q3_K, 3e-2},
                                           MatmulCase{GgmlType::Q4_K, 3e-2}, MatmulCase{GgmlType::Q5_K, 3e-2},
                                           MatmulCase{GgmlType::Q6_K, 3e-2}),
                         [](const auto& info) { return std::string(type_name(info.param.type)); });

TEST(Matmul, BatchInvariantAndThreadInvariant) {
  // Batches of every weight type take the tile kernels (9 tokens: full tiles and a remainder;
  // 37 rows: full row tiles and a remainder), one token dot_rows. 512 and 768 columns: even
  // and odd K-quant super-block counts; the float types also at stories260K's 64 and 172 (a
  // scalar tail on every target).
  for (GgmlType type :
       {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
        GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    const bool is_float = type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16;
    for (int64_t cols : is_float ? std::vector<int64_t>{64, 172, 512, 768} : std::vector<int64_t>{512, 768}) {
      const int64_t rows = 37, n_tokens = 9;
      OwnedMatrix m = make_matrix(type, rows, cols, 11);
      const auto x = random_floats(static_cast<size_t>(n_tokens * cols), 3);
      ThreadPool pool2(2), pool1(1);
      pool2.set_min_chunk_work(1);  // split even these small shapes between the threads
      MatmulScratch scratch;
      std::vector<float> batched(n_tokens * rows);
      matmul(m.view, x.data(), n_tokens, cols, batched.data(), rows, pool2, scratch);
      for (int64_t t = 0; t < n_tokens; ++t) {
        std::vector<float> single(rows);
        matmul(m.view, x.data() + t * cols, 1, cols, single.data(), rows, pool1, scratch);
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_EQ(single[r], batched[t * rows + r])
              << type_name(type) << " cols " << cols << " token " << t << " row " << r;
      }
    }
  }
}

// A matrix in row panels (the layout resident block-quantised weights take on AVX512-VNNI
// CPUs) gives the floats of the same matrix in GGUF's rows at every batch size, single rows
// read back through dequantize_weight_row are the rows, and preferred_layout picks panels
// exactly where a panel kernel exists and the rows fill whole panels.
TEST(Matmul, RowPanelsEqualRowsAtEveryBatchSize) {
  EXPECT_EQ(preferred_layout(GgmlType::F16, 64), WeightLayout::kRows);
  EXPECT_EQ(preferred_layout(GgmlType::Q4_0, 40), WeightLayout::kRows);  // not whole panels
  if (preferred_layout(GgmlType::Q4_0, 48) != WeightLayout::kRowPanels)
    GTEST_SKIP() << "this CPU has no row-panel kernel (AVX512-VNNI)";
  // Three panels; 17 blocks of the 32-element formats, 3 super-blocks of the K-quants.
  const std::vector<std::pair<GgmlType, int64_t>> shapes = {
      {GgmlType::Q4_0, 544}, {GgmlType::Q4_1, 544}, {GgmlType::Q5_0, 544}, {GgmlType::Q5_1, 544},
      {GgmlType::Q8_0, 544}, {GgmlType::Q2_K, 768}, {GgmlType::Q3_K, 768}, {GgmlType::Q4_K, 768},
      {GgmlType::Q5_K, 768}, {GgmlType::Q6_K, 768}};
  for (const auto& [type, cols] : shapes) {
    EXPECT_EQ(preferred_layout(type, 48), WeightLayout::kRowPanels) << type_name(type);
    const int64_t rows = 48;
    OwnedMatrix m = make_matrix(type, rows, cols, 5);
    std::vector<uint8_t> panel_bytes = m.bytes;
    pack_row_panels(type, panel_bytes.data(), rows, cols);
    WeightMatrix panels = m.view;
    panels.data = panel_bytes.data();
    panels.layout = WeightLayout::kRowPanels;
    std::vector<float> want(cols), got(cols);
    for (int64_t r : {0, 17, 47}) {
      dequantize_row(type, m.view.row(r), want.data(), cols);
      dequantize_weight_row(panels, r, got.data());
      EXPECT_EQ(want, got) << type_name(type) << " row " << r;
    }
    ThreadPool pool(2);
    pool.set_min_chunk_work(1);  // split even these small shapes between the threads
    for (int64_t n_tokens : {1, 2, 3, 4, 5, 9, 20}) {
      const auto x = random_floats(static_cast<size_t>(n_tokens * cols), 21);
      std::vector<float> from_rows(n_tokens * rows, -1.0f), from_panels(n_tokens * rows, -2.0f);
      MatmulScratch scratch;
      matmul(m.view, x.data(), n_tokens, cols, from_rows.data(), rows, pool, scratch);
      matmul(panels, x.data(), n_tokens, cols, from_panels.data(), rows, pool, scratch);
      for (size_t k = 0; k < from_rows.size(); ++k)
        ASSERT_EQ(from_panels[k], from_rows[k]) << type_name(type) << ", " << n_tokens << " tokens, element " << k;
    }
  }
}

// q/k/v-style groups: matrices sharing an input reuse its quantisation (and a tile's own
// layout of it) where their formats match, and must give exactly what each alone gives. The
// groups mix shared formats (Q4_0 and Q8_0: both Q8_0 activations, different tile layouts;
// Q4_K and Q6_K: Q8_K) with changes of format in the middle, at batch sizes on both sides
// of where the tiles start (1, 3, 9, 20 tokens).
TEST(Matmul, SharedInputEqualsEachMatrixAlone) {
  const int64_t cols = 512;
  const std::vector<std::vector<GgmlType>> groups = {
      {GgmlType::Q4_0, GgmlType::Q4_0, GgmlType::Q8_0},
      {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q4_K},
      {GgmlType::Q8_0, GgmlType::F16, GgmlType::Q4_0},
  };
  ThreadPool pool(2);
  pool.set_min_chunk_work(1);  // split even these small shapes between the threads
  for (const auto& types : groups) {
    std::vector<OwnedMatrix> mats;
    for (size_t i = 0; i < types.size(); ++i) mats.push_back(make_matrix(types[i], 21 + 8 * i, cols, 40 + i));
    for (int64_t n_tokens : {1, 3, 9, 20}) {
      const auto x = random_floats(static_cast<size_t>(n_tokens * cols), 9);
      std::vector<std::vector<float>> shared(types.size()), alone(types.size());
      for (size_t i = 0; i < types.size(); ++i) {
        shared[i].assign(n_tokens * mats[i].view.rows, -1.0f);
        alone[i].assign(n_tokens * mats[i].view.rows, -2.0f);
        MatmulScratch own;
        matmul(mats[i].view, x.data(), n_tokens, cols, alone[i].data(), mats[i].view.rows, pool, own);
      }
      MatmulScratch scratch;
      matmul_shared_input({{&mats[0].view, shared[0].data(), mats[0].view.rows},
                           {&mats[1].view, shared[1].data(), mats[1].view.rows},
                           {&mats[2].view, shared[2].data(), mats[2].view.rows}},
                          x.data(), n_tokens, cols, pool, scratch);
      for (size_t i = 0; i < types.size(); ++i)
        for (size_t k = 0; k < alone[i].size(); ++k)
          ASSERT_EQ(shared[i][k], alone[i][k]) << "matrix " << i << " (" << type_name(types[i]) << ") of its group, "
                                               << n_tokens << " tokens, element " << k;
    }
  }
}

TEST(RmsNorm, MatchesDoubleFormula) {
  const int n = 77;
  const auto x = random_floats(n, 1), w = random_floats(n, 2);
  std::vector<float> y(n);
  rms_norm(x.data(), w.data(), 1e-5f, n, y.data());
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(y[i], x[i] * scale * w[i], 1e-5 * std::fabs(x[i] * scale * w[i]) + 1e-7);
}

TEST(Rope, NormalAndNeoxRotatePairsByPositionAngle) {
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    const int head_dim = 16, position = 13;
    RopeParams p{mode, head_dim, 10000.0f, 1.0f, nullptr};
    auto head = random_floats(head_dim, 5);
    const auto orig = head;
    std::vector<float> cs(head_dim);
    rope_cos_sin(p, position, cs.data());
    rope_apply(p, cs.data(), head.data());
    for (int i = 0; i < head_dim / 2; ++i) {
      const double theta = position * std::pow(10000.0, -2.0 * i / head_dim);
      const int a = mode == RopeMode::kNormal ? 2 * i : i;
      const int b = mode == RopeMode::kNormal ? 2 * i + 1 : i + head_dim / 2;
      EXPECT_NEAR(head[a], orig[a] * std::cos(theta) - orig[b] * std::sin(theta), 1e-4);
      EXPECT_NEAR(head[b], orig[a] * std::sin(theta) + orig[b] * std::cos(theta), 1e-4);
    }
  }
}

TEST(Rope, PositionZeroIsIdentity) {
  RopeParams p{RopeMode::kNeox, 8, 10000.0f, 1.0f, nullptr};
  auto head = random_floats(8, 9);
  const auto orig = head;
  std::vector<float> cs(8);
  rope_cos_sin(p, 0, cs.data());
  rope_apply(p, cs.data(), head.data());
  EXPECT_EQ(head, orig);
}

// The vectorised SwiGLU against std::exp, on sizes around the vector width and on inputs
// from tiny to beyond exp's range, and the same floats whatever the split: each element
// alone, the whole array at once, and pieces starting at every offset.
TEST(Swiglu, CloseToTheScalarOracleAndTheSameFloatsWhateverTheSplit) {
  for (int64_t n : {1, 3, 7, 15, 16, 17, 31, 33, 64, 67, 172}) {
    auto gate = random_floats(static_cast<size_t>(n), 40 + static_cast<uint32_t>(n));
    const auto up = random_floats(static_cast<size_t>(n), 80 + static_cast<uint32_t>(n));
    // Spread the gates over -120..120 so exp's cap and its tiny results are both crossed.
    for (int64_t i = 0; i < n; ++i) gate[i] *= (i % 5 == 0) ? 120.0f : (i % 5 == 1 ? 9.0f : 1.0f);
    std::vector<float> whole = gate, ref = gate;
    swiglu_inplace(whole.data(), up.data(), n);
    swiglu_inplace_ref(ref.data(), up.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(whole[i], ref[i], 4e-7f * std::fabs(ref[i]) + 1e-30f) << "n " << n << " element " << i;
      std::vector<float> one = {gate[i]};
      swiglu_inplace(one.data(), &up[i], 1);
      EXPECT_EQ(one[0], whole[i]) << "element " << i << " alone";
    }
    for (int64_t cut = 1; cut < n; ++cut) {
      std::vector<float> split = gate;
      swiglu_inplace(split.data(), up.data(), cut);
      swiglu_inplace(split.data() + cut, up.data() + cut, n - cut);
      EXPECT_EQ(split, whole) << "n " << n << " cut at " << cut;
    }
  }
}

// The vectorised softmax normaliser against a double sum of std::exp: sizes around the
// vector width up to a 128K vocabulary, logits spread far below the shift (terms that
// underflow to 0) and -inf entries (which add nothing).
TEST(ExpSumShifted, CloseToTheDoubleSumOfStdExp) {
  for (int64_t n : {1, 3, 15, 16, 17, 33, 512, 1000, 32000, 128256}) {
    auto x = random_floats(static_cast<size_t>(n), 7 + static_cast<uint32_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] *= (i % 7 == 0) ? 150.0f : 8.0f;
    if (n > 3) x[2] = -std::numeric_limits<float>::infinity();
    float max = x[0];
    for (float v : x) max = std::max(max, v);
    const double want = exp_sum_shifted_ref(x.data(), n, max);
    ASSERT_GE(want, 1.0);  // the maximum's own term
    EXPECT_NEAR(exp_sum_shifted(x.data(), n, max), want, 2e-6 * want) << "n " << n;
  }
  // Terms of similar size (every logit within 2 of the shift): the f32 lanes' rounding is
  // what shows here, over a 128K vocabulary.
  auto flat = random_floats(128256, 99);
  const double flat_want = exp_sum_shifted_ref(flat.data(), 128256, 1.0f);
  EXPECT_NEAR(exp_sum_shifted(flat.data(), 128256, 1.0f), flat_want, 2e-6 * flat_want);
  const float all_masked[3] = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 0};
  EXPECT_EQ(exp_sum_shifted(all_masked, 3, 0.0f), 1.0f) << "only the finite entry counts";
}

// The vectorised argmax gives the scalar loop's index: first maximum on ties, sizes around
// the vector width up to a 128K vocabulary, the maximum in the tail, -inf and NaN entries.
TEST(ArgmaxF32, TheScalarLoopsIndexOnTiesInfinitiesAndNaN) {
  for (int64_t n : {1, 2, 3, 15, 16, 17, 31, 33, 512, 1000, 32000, 128256}) {
    auto x = random_floats(static_cast<size_t>(n), 11 + static_cast<uint32_t>(n));
    EXPECT_EQ(argmax_f32(x.data(), n), argmax_f32_ref(x.data(), n)) << "n " << n;
    x[n - 1] = 100.0f;  // the maximum in the scalar tail
    EXPECT_EQ(argmax_f32(x.data(), n), n - 1) << "n " << n;
    if (n < 4) continue;
    x[n / 3] = 100.0f;  // a tie: the first one
    EXPECT_EQ(argmax_f32(x.data(), n), n / 3) << "n " << n;
    x[1] = std::numeric_limits<float>::quiet_NaN();  // NaN is never chosen ...
    x[n / 2] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(argmax_f32(x.data(), n), argmax_f32_ref(x.data(), n)) << "n " << n;
    EXPECT_EQ(argmax_f32(x.data(), n), n / 3) << "n " << n;
  }
  // A NaN after a lane's running maximum must not drop it (x86's max returns its second
  // operand when one is NaN): 16-lane vectors alternate between two accumulators, so
  // elements 3, 35 and 67 share one lane of one accumulator.
  std::vector<float> lane(96, 0.0f);
  lane[3] = 50.0f;
  lane[35] = std::numeric_limits<float>::quiet_NaN();
  lane[67] = 1.0f;
  EXPECT_EQ(argmax_f32(lane.data(), 96), 3);
  const float nan_first[3] = {std::numeric_limits<float>::quiet_NaN(), 1.0f, 2.0f};
  EXPECT_EQ(argmax_f32(nan_first, 3), argmax_f32_ref(nan_first, 3)) << "... except as the first entry";
  const float all_low[4] = {-INFINITY, -INFINITY, std::numeric_limits<float>::quiet_NaN(), -INFINITY};
  EXPECT_EQ(argmax_f32(all_low, 4), 0);
}

TEST(Softmax, SumsToOneAndZeroesMaskedEntries) {
  std::vector<float> x = {1.0f, -INFINITY, 3.0f, 0.5f};
  softmax_inplace(x.data(), 4);
  EXPECT_EQ(x[1], 0.0f);
  EXPECT_NEAR(x[0] + x[2] + x[3], 1.0f, 1e-6);
  EXPECT_GT(x[2], x[0]);
}

std::vector<uint16_t> to_f16(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = fp32_to_fp16(v[i]);
  return h;
}

TEST(Attention, MatchesReferenceWithArbitraryMaskAndGqa) {
  const AttentionShape s{8, 2, 32, 1.0f / std::sqrt(32.0f)};
  const int64_t n_tokens = 5, n_kv = 23, kv_row = s.n_head_kv * s.head_dim;
  const auto q = random_floats(n_tokens * s.n_head * s.head_dim, 1);
  const auto k = to_f16(random_floats(n_kv * kv_row, 2));
  const auto v = to_f16(random_floats(n_kv * kv_row, 3));
  std::mt19937 rng(4);
  std::vector<uint8_t> mask(n_tokens * n_kv);
  for (auto& m : mask) m = rng() % 3 != 0;
  for (int64_t t = 0; t < n_tokens; ++t) mask[t * n_kv + t] = 1;  // every row sees something
  std::vector<float> fast(q.size()), ref(q.size());
  ThreadPool pool(2);
  pool.set_min_chunk_work(1);  // split even these small shapes between the threads
  attention(s, q.data(), n_tokens, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv, mask.data(),
            fast.data(), pool);
  attention_ref(s, q.data(), n_tokens, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv,
                mask.data(), ref.data());
  EXPECT_LT(relative_rms_error(fast, ref), 1e-5);
}

TEST(Attention, RowResultIndependentOfBatchAndExtraMaskedCells) {
  const AttentionShape s{4, 4, 16, 0.25f};
  const int64_t kv_row = s.n_head_kv * s.head_dim, n_kv = 9;
  const auto q = random_floats(3 * s.n_head * s.head_dim, 5);
  const auto k = to_f16(random_floats(n_kv * kv_row, 6));
  const auto v = to_f16(random_floats(n_kv * kv_row, 7));
  std::vector<uint8_t> causal(3 * n_kv, 0);
  for (int t = 0; t < 3; ++t)
    for (int c = 0; c <= 6 + t; ++c) causal[t * n_kv + c] = 1;
  ThreadPool pool(2);
  pool.set_min_chunk_work(1);  // split even these small shapes between the threads
  std::vector<float> batched(q.size());
  attention(s, q.data(), 3, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv, causal.data(),
            batched.data(), pool);
  // Row 0 alone, over only the 7 cells it can see.
  std::vector<uint8_t> single(7, 1);
  std::vector<float> alone(s.n_head * s.head_dim);
  attention(s, q.data(), 1, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), 7, single.data(),
            alone.data(), pool);
  for (size_t i = 0; i < alone.size(); ++i) ASSERT_EQ(alone[i], batched[i]) << i;
}

}  // namespace
}  // namespace sf
