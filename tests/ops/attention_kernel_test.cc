// The SIMD attention kernel against the double-precision reference on odd shapes (every
// instruction set this CPU runs), and the two bit-identity properties lossless speculative
// decoding depends on: a row's result does not depend on the other rows of its batch, and
// it does not depend on masked cells (a tree node verified in a batch whose cache holds its
// siblings gives exactly the floats of decoding it alone over its committed path).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "ops/attention.h"
#include "ops/attention_rows.h"
#include "ops/visible_cells.h"
#include "ops_test_util.h"
#include "quant/dot_kernel.h"

namespace sf {
namespace {

using test::random_f16;
using test::random_floats;

double relative_rms_error(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - want[i]) * static_cast<double>(got[i] - want[i]);
    norm += static_cast<double>(want[i]) * want[i];
  }
  return std::sqrt(err / std::max(norm, 1e-30));
}

std::string shape_label(const AttentionShape& s, int64_t n_kv, int64_t n_tokens) {
  return "head_dim=" + std::to_string(s.head_dim) + " heads=" + std::to_string(s.n_head) + "/" +
         std::to_string(s.n_head_kv) + " n_kv=" + std::to_string(n_kv) + " rows=" + std::to_string(n_tokens);
}

// A whole batch through the row kernel of one instruction set (what attention() does with
// the best one).
void attention_for_target(const AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k,
                          const uint16_t* v, int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out,
                          int64_t target) {
  const int group = s.n_head / s.n_head_kv;
  const int64_t q_row = static_cast<int64_t>(s.n_head) * s.head_dim, block = group * s.head_dim;
  std::vector<int32_t> cells(n_kv);
  std::vector<float> scores(attention_row_scratch_floats(group, s.head_dim, n_kv));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t n = visible_cells(mask + t * n_kv, n_kv, cells.data());
    for (int kvh = 0; kvh < s.n_head_kv; ++kvh) {
      float* o = out + t * q_row + kvh * block;
      if (n == 0) {
        std::fill(o, o + block, 0.0f);
        continue;
      }
      AttentionRowArgs a;
      a.q = q + t * q_row + kvh * block;
      a.group = group;
      a.head_dim = s.head_dim;
      a.scale = s.scale;
      a.k = k + kvh * s.head_dim;
      a.v = v + kvh * s.head_dim;
      a.kv_row = kv_row;
      a.cells = cells.data();
      a.n_cells = n;
      a.scores = scores.data();
      a.out = o;
      attend_visible_cells_for_target(a, target);
    }
  }
}

TEST(VisibleCells, MatchesNaiveScanOnRandomMasks) {
  std::mt19937 rng(3);
  for (int64_t n_kv : {0, 1, 7, 8, 9, 63, 64, 65, 300}) {
    for (int density : {0, 1, 50, 99, 100}) {
      std::vector<uint8_t> mask(n_kv);
      // Any non-zero byte is visible, not only 1.
      for (auto& m : mask) m = static_cast<int>(rng() % 100) < density ? static_cast<uint8_t>(1 + rng() % 255) : 0;
      std::vector<int32_t> want, got(n_kv + 1, -1);
      for (int64_t c = 0; c < n_kv; ++c)
        if (mask[c]) want.push_back(static_cast<int32_t>(c));
      const int64_t n = visible_cells(mask.data(), n_kv, got.data());
      got.resize(n);
      EXPECT_EQ(got, want) << "n_kv=" << n_kv << " density=" << density;
    }
  }
}

// Odd shapes, GQA, random masks of several densities, on every compiled instruction set
// and through attention() itself.
TEST(AttentionKernel, MatchesReferenceOnOddShapesForEveryTarget) {
  struct Case {
    int head_dim, n_head, n_head_kv;
    int64_t n_kv, n_tokens;
  };
  const Case cases[] = {
      {8, 8, 4, 1, 1},  {8, 8, 4, 37, 9},   {8, 8, 8, 2100, 3},   {12, 6, 2, 5, 4},   {12, 4, 1, 130, 2},
      {64, 8, 1, 3, 5}, {64, 4, 4, 257, 3}, {64, 32, 4, 2100, 1}, {128, 4, 2, 66, 2}, {128, 2, 2, 1031, 1},
      {6, 2, 1, 19, 3}, {16, 4, 2, 99, 4},  {32, 8, 2, 515, 2},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    const AttentionShape s{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
    const int64_t kv_row = static_cast<int64_t>(s.n_head_kv) * s.head_dim;
    const auto q = random_floats(c.n_tokens * s.n_head * s.head_dim, ++seed, 2.0f);
    const auto k = random_f16(c.n_kv * kv_row, ++seed);
    const auto v = random_f16(c.n_kv * kv_row, ++seed);
    std::mt19937 rng(++seed);
    std::vector<uint8_t> mask(c.n_tokens * c.n_kv);
    for (int64_t t = 0; t < c.n_tokens; ++t) {
      const int density = std::vector<int>{100, 50, 3, 90, 20}[t % 5];
      for (int64_t i = 0; i < c.n_kv; ++i) mask[t * c.n_kv + i] = static_cast<int>(rng() % 100) < density;
      mask[t * c.n_kv + rng() % c.n_kv] = 1;  // every row sees something
    }
    std::vector<float> ref(q.size()), fast(q.size());
    attention_ref(s, q.data(), c.n_tokens, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), c.n_kv,
                  mask.data(), ref.data());
    ThreadPool pool(2);
    pool.set_min_chunk_work(1);  // split even these small shapes between the threads
    attention(s, q.data(), c.n_tokens, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), c.n_kv,
              mask.data(), fast.data(), pool);
    EXPECT_LT(relative_rms_error(fast, ref), 2e-6) << shape_label(s, c.n_kv, c.n_tokens);
    for (int64_t target : dot_kernel_targets()) {
      std::vector<float> got(q.size());
      attention_for_target(s, q.data(), c.n_tokens, k.data(), v.data(), kv_row, c.n_kv, mask.data(), got.data(),
                           target);
      EXPECT_LT(relative_rms_error(got, ref), 2e-6)
          << dot_kernel_target_name(target) << " " << shape_label(s, c.n_kv, c.n_tokens);
    }
  }
}

// KvCache keeps each KV head's cells together (head-major); the kernel reads a head's cells
// at any stride, so the layout changes where the halves are, never the floats.
TEST(AttentionKernel, HeadMajorLayoutGivesTheBitsOfCellMajor) {
  struct Case {
    int head_dim, n_head, n_head_kv;
    int64_t n_kv, n_tokens;
  };
  for (const Case& c :
       std::vector<Case>{{8, 8, 4, 61, 7}, {64, 32, 4, 300, 3}, {12, 6, 2, 129, 5}, {64, 8, 8, 40, 1}}) {
    const AttentionShape s{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
    const KvLayout cell_major = KvLayout::cell_major(s.n_head_kv, s.head_dim);
    const int64_t n_ctx = c.n_kv + 13;  // a head's cells are followed by unused ones, as in a cache
    const KvLayout head_major = KvLayout::head_major(n_ctx, s.head_dim);
    const auto k = random_f16(c.n_kv * cell_major.cell_stride, 3), v = random_f16(c.n_kv * cell_major.cell_stride, 4);
    std::vector<uint16_t> hk(static_cast<size_t>(s.n_head_kv * head_major.head_stride), fp32_to_fp16(1e4f));
    std::vector<uint16_t> hv(hk.size(), fp32_to_fp16(-1e4f));
    for (int h = 0; h < s.n_head_kv; ++h)
      for (int64_t cell = 0; cell < c.n_kv; ++cell)
        for (int d = 0; d < s.head_dim; ++d) {
          hk[h * head_major.head_stride + cell * s.head_dim + d] =
              k[cell * cell_major.cell_stride + h * s.head_dim + d];
          hv[h * head_major.head_stride + cell * s.head_dim + d] =
              v[cell * cell_major.cell_stride + h * s.head_dim + d];
        }
    const auto q = random_floats(c.n_tokens * s.n_head * s.head_dim, 5, 2.0f);
    std::mt19937 rng(6);
    std::vector<uint8_t> mask(c.n_tokens * c.n_kv);
    for (auto& m : mask) m = rng() % 4 != 0;
    ThreadPool pool(2);
    pool.set_min_chunk_work(1);
    std::vector<float> want(q.size()), got(q.size()), ref(q.size());
    attention(s, q.data(), c.n_tokens, k.data(), v.data(), cell_major, c.n_kv, mask.data(), want.data(), pool);
    attention(s, q.data(), c.n_tokens, hk.data(), hv.data(), head_major, c.n_kv, mask.data(), got.data(), pool);
    attention_ref(s, q.data(), c.n_tokens, hk.data(), hv.data(), head_major, c.n_kv, mask.data(), ref.data());
    for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(got[i], want[i]) << shape_label(s, c.n_kv, c.n_tokens) << " " << i;
    EXPECT_LT(relative_rms_error(got, ref), 2e-6) << shape_label(s, c.n_kv, c.n_tokens);
  }
}

TEST(AttentionKernel, RowWithNothingVisibleIsZero) {
  const AttentionShape s{2, 1, 8, 0.35f};
  const auto q = random_floats(2 * 16, 1);
  const auto k = random_f16(5 * 8, 2), v = random_f16(5 * 8, 3);
  std::vector<uint8_t> mask(2 * 5, 0);
  mask[5 + 2] = 1;
  std::vector<float> out(q.size(), 7.0f), ref(q.size(), 7.0f);
  ThreadPool pool(1);
  attention(s, q.data(), 2, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), 5, mask.data(),
            out.data(), pool);
  attention_ref(s, q.data(), 2, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), 5, mask.data(),
                ref.data());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 0.0f);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(ref[i], 0.0f);
  EXPECT_LT(relative_rms_error(out, ref), 2e-6);
}

// A tree-verification batch and plain decoding of its rows, for head sizes that take every
// code path (one chunk, several chunks, the scalar loop).
//
// Cache layout in the batch: P committed cells, then T tree nodes (node i's parent is a
// random earlier node or the prefix). Row i sees the prefix, its ancestors and itself; the
// other tree cells are masked. Decoding node i alone: a cache with the prefix followed by
// exactly its root-to-node path (copied, as commit would place it), n_kv = P + depth,
// everything visible. The floats must be identical.
class AttentionInvariance : public ::testing::TestWithParam<int> {};

TEST_P(AttentionInvariance, TreeRowEqualsDecodingItsPathAlone) {
  const int head_dim = GetParam();
  const AttentionShape s{8, 2, head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim))};
  const int64_t kv_row = static_cast<int64_t>(s.n_head_kv) * head_dim, q_row = s.n_head * head_dim;
  std::mt19937 rng(static_cast<uint32_t>(head_dim));
  for (int64_t prefix : {1, 6, 61, 300}) {
    const int64_t tree = 40, n_kv = prefix + tree;
    std::vector<int> parent(tree);
    for (int i = 0; i < tree; ++i) parent[i] = i == 0 ? -1 : static_cast<int>(rng() % i);
    const auto k = random_f16(n_kv * kv_row, static_cast<uint32_t>(prefix) * 3 + 1);
    const auto v = random_f16(n_kv * kv_row, static_cast<uint32_t>(prefix) * 3 + 2);
    const auto q = random_floats(tree * q_row, static_cast<uint32_t>(prefix) * 3 + 3, 3.0f);
    std::vector<uint8_t> mask(tree * n_kv, 0);
    std::vector<std::vector<int>> paths(tree);
    for (int i = 0; i < tree; ++i) {
      for (int a = i; a >= 0; a = parent[a]) paths[i].insert(paths[i].begin(), a);
      for (int64_t c = 0; c < prefix; ++c) mask[i * n_kv + c] = 1;
      for (int a : paths[i]) mask[i * n_kv + prefix + a] = 1;
    }
    ThreadPool pool2(2), pool1(1);
    pool2.set_min_chunk_work(1);  // split even these small shapes between the threads
    std::vector<float> batched(tree * q_row);
    attention(s, q.data(), tree, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv, mask.data(),
              batched.data(), pool2);
    for (int i = 0; i < tree; ++i) {
      const int64_t decode_kv = prefix + static_cast<int64_t>(paths[i].size());
      std::vector<uint16_t> dk(k.begin(), k.begin() + prefix * kv_row), dv(v.begin(), v.begin() + prefix * kv_row);
      for (int a : paths[i]) {
        dk.insert(dk.end(), k.begin() + (prefix + a) * kv_row, k.begin() + (prefix + a + 1) * kv_row);
        dv.insert(dv.end(), v.begin() + (prefix + a) * kv_row, v.begin() + (prefix + a + 1) * kv_row);
      }
      const std::vector<uint8_t> all(decode_kv, 1);
      std::vector<float> alone(q_row);
      attention(s, q.data() + i * q_row, 1, dk.data(), dv.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim),
                decode_kv, all.data(), alone.data(), pool1);
      for (int64_t x = 0; x < q_row; ++x)
        ASSERT_EQ(alone[x], batched[i * q_row + x]) << "prefix " << prefix << " node " << i << " element " << x;
      // The same row alone but with the whole tree in the cache (its mask row only).
      std::vector<float> alone_in_tree(q_row);
      attention(s, q.data() + i * q_row, 1, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv,
                mask.data() + i * n_kv, alone_in_tree.data(), pool1);
      for (int64_t x = 0; x < q_row; ++x) ASSERT_EQ(alone_in_tree[x], alone[x]) << "node " << i;
    }
  }
}

// Masked cells between visible ones (holes anywhere in the cache) change nothing either, and
// neither do the batch size, the row's place in the batch, or the thread count.
TEST_P(AttentionInvariance, MaskedHolesBatchSizeAndThreadsChangeNothing) {
  const int head_dim = GetParam();
  const AttentionShape s{4, 4, head_dim, 0.3f};
  const int64_t kv_row = static_cast<int64_t>(s.n_head_kv) * head_dim, q_row = s.n_head * head_dim;
  const int64_t n_kv = 203, n_tokens = 7;
  const auto k = random_f16(n_kv * kv_row, 11), v = random_f16(n_kv * kv_row, 12);
  const auto q = random_floats(n_tokens * q_row, 13);
  std::mt19937 rng(14);
  std::vector<uint8_t> mask(n_tokens * n_kv);
  for (auto& m : mask) m = rng() % 4 != 0;
  ThreadPool pool2(2), pool1(1);
  pool2.set_min_chunk_work(1);  // split even these small shapes between the threads
  std::vector<float> batched(n_tokens * q_row);
  attention(s, q.data(), n_tokens, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv, mask.data(),
            batched.data(), pool2);
  for (int64_t t = 0; t < n_tokens; ++t) {
    // Compact the row's visible cells into a hole-free cache.
    std::vector<uint16_t> ck, cv;
    for (int64_t c = 0; c < n_kv; ++c) {
      if (!mask[t * n_kv + c]) continue;
      ck.insert(ck.end(), k.begin() + c * kv_row, k.begin() + (c + 1) * kv_row);
      cv.insert(cv.end(), v.begin() + c * kv_row, v.begin() + (c + 1) * kv_row);
    }
    const int64_t compact_kv = static_cast<int64_t>(ck.size()) / kv_row;
    // ... plus masked cells after it, like a longer cache.
    std::vector<uint8_t> row_mask(compact_kv + 9, 1);
    for (int i = 0; i < 9; ++i) row_mask[compact_kv + i] = 0;
    ck.resize((compact_kv + 9) * kv_row, fp32_to_fp16(100.0f));
    cv.resize((compact_kv + 9) * kv_row, fp32_to_fp16(-100.0f));
    std::vector<float> alone(q_row);
    attention(s, q.data() + t * q_row, 1, ck.data(), cv.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim),
              compact_kv + 9, row_mask.data(), alone.data(), pool1);
    for (int64_t x = 0; x < q_row; ++x) ASSERT_EQ(alone[x], batched[t * q_row + x]) << "row " << t << " element " << x;
  }
}

INSTANTIATE_TEST_SUITE_P(HeadDims, AttentionInvariance, ::testing::Values(4, 6, 8, 12, 16, 64, 128),
                         [](const auto& info) { return "head_dim_" + std::to_string(info.param); });

}  // namespace
}  // namespace sf
