// The shared-prefix path of attention: a block of rows whose visible lists begin alike (a
// token tree's committed prefix and root) widens each tile of those cells once for all of
// them. Lossless verification needs every row's floats to stay exactly those of the row run
// alone, so these tests compare bits, on every instruction set this CPU runs, for head sizes
// that take every code path and for grouped-query heads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

TEST(VisibleCells, CommonPrefixOfTwoLists) {
  std::vector<int32_t> a(300), b(300);
  for (int i = 0; i < 300; ++i) a[i] = b[i] = 2 * i;
  EXPECT_EQ(common_prefix(a.data(), 300, b.data(), 300), 300);
  EXPECT_EQ(common_prefix(a.data(), 300, b.data(), 130), 130);
  EXPECT_EQ(common_prefix(a.data(), 0, b.data(), 300), 0);
  for (int at : {0, 1, 63, 64, 65, 128, 255, 299}) {
    b[at] = -1;
    EXPECT_EQ(common_prefix(a.data(), 300, b.data(), 300), at) << at;
    b[at] = a[at];
  }
}

// The row kernel on a block of rows against each row alone, both through one instruction
// set. The rows share a prefix list with holes (masked cells) that crosses tile boundaries;
// after it each row has its own tail (empty, short, or longer than a tile), and the block is
// also run with fewer cells declared shared than the rows have in common.
class AttentionSharedPrefix : public ::testing::TestWithParam<int> {};

TEST_P(AttentionSharedPrefix, BlockOfRowsEqualsEachRowAloneOnEveryTarget) {
  const int head_dim = GetParam();
  const int n_head_kv = 2, kvh = 1;  // the second KV head: its keys start mid-row
  std::mt19937 rng(static_cast<uint32_t>(100 + head_dim));
  for (int group : {1, 3, 4, 8}) {
    const int64_t kv_row = static_cast<int64_t>(n_head_kv) * head_dim;
    for (int64_t span : {1, 6, 40, 259, 301}) {  // prefix cells before holes are taken out
      std::vector<int32_t> prefix;
      for (int32_t c = 0; c < span; ++c)
        if (c == 0 || rng() % 8 != 0) prefix.push_back(c);
      for (int n_rows : {1, 2, 3, 7, 16}) {
        // Tails: cells after the prefix span, ascending, one list per row.
        std::vector<std::vector<int32_t>> lists(n_rows);
        int64_t n_kv = span;
        for (int r = 0; r < n_rows; ++r) {
          lists[r] = prefix;
          const int tail = r == n_rows - 1 && n_rows > 1 ? 70 : static_cast<int>(rng() % 10);
          for (int i = 0; i < tail; ++i) lists[r].push_back(static_cast<int32_t>(span + 3 * i + rng() % 3));
          n_kv = std::max<int64_t>(n_kv, lists[r].empty() ? 0 : lists[r].back() + 1);
        }
        const auto k = random_f16(n_kv * kv_row, rng());
        const auto v = random_f16(n_kv * kv_row, rng());
        const int64_t q_block = static_cast<int64_t>(group) * head_dim;
        const auto q = random_floats(n_rows * q_block, rng(), 2.0f);
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        const auto args_for = [&](int r, std::vector<float>& scratch, std::vector<float>& out) {
          AttentionRowArgs a;
          a.q = q.data() + r * q_block;
          a.group = group;
          a.head_dim = head_dim;
          a.scale = scale;
          a.k = k.data() + kvh * head_dim;
          a.v = v.data() + kvh * head_dim;
          a.kv_row = kv_row;
          a.cells = lists[r].data();
          a.n_cells = static_cast<int64_t>(lists[r].size());
          // Garbage in the scratch and the output: the kernel must not read either.
          scratch.assign(attention_row_scratch_floats(group, head_dim, a.n_cells),
                         std::numeric_limits<float>::quiet_NaN());
          out.assign(q_block, std::numeric_limits<float>::quiet_NaN());
          a.scores = scratch.data();
          a.out = out.data();
          return a;
        };
        const int64_t shared = static_cast<int64_t>(prefix.size());
        for (int64_t target : dot_kernel_targets()) {
          std::vector<std::vector<float>> alone(n_rows), alone_scratch(n_rows);
          for (int r = 0; r < n_rows; ++r)
            attend_visible_cells_for_target(args_for(r, alone_scratch[r], alone[r]), target);
          for (int64_t n_shared : {shared, shared / 2 + 1}) {
            std::vector<std::vector<float>> got(n_rows), scratch(n_rows);
            std::vector<AttentionRowArgs> args;
            for (int r = 0; r < n_rows; ++r) args.push_back(args_for(r, scratch[r], got[r]));
            attend_visible_rows_for_target(args.data(), n_rows, n_shared, target);
            for (int r = 0; r < n_rows; ++r)
              for (int64_t x = 0; x < q_block; ++x)
                ASSERT_TRUE(same_bits(got[r][x], alone[r][x]))
                    << dot_kernel_target_name(target) << " group " << group << " prefix " << shared << " shared "
                    << n_shared << " rows " << n_rows << ": row " << r << " element " << x << ": " << got[r][x]
                    << " vs " << alone[r][x];
          }
        }
      }
    }
  }
}

// attention() itself on token-tree batches: blocks of rows over every KV head, 1 and 2
// threads, rows that see nothing between the others, and a causal (prefill) batch whose rows
// share a prefix that grows by one cell per row. Every row equals attention() over that row
// alone.
TEST_P(AttentionSharedPrefix, TreeBatchEqualsEachRowAlone) {
  const int head_dim = GetParam();
  struct Heads {
    int n_head, n_head_kv;
  };
  std::mt19937 rng(static_cast<uint32_t>(200 + head_dim));
  for (const Heads h : {Heads{8, 8}, Heads{8, 2}, Heads{12, 4}, Heads{32, 4}}) {
    const AttentionShape s{h.n_head, h.n_head_kv, head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim))};
    const int64_t kv_row = static_cast<int64_t>(h.n_head_kv) * head_dim, q_row = h.n_head * head_dim;
    for (int64_t prefix : {3, 130, 301}) {
      for (int64_t n_tokens : {2, 5, 17, 33, 64}) {
        const int64_t n_kv = prefix + n_tokens;
        std::vector<uint8_t> mask(n_tokens * n_kv, 0);
        const bool causal = n_tokens == 17;
        std::vector<int> parent(n_tokens);
        for (int64_t i = 0; i < n_tokens; ++i) {
          uint8_t* row = mask.data() + i * n_kv;
          for (int64_t c = 0; c < prefix; ++c) row[c] = c % 37 != 5;  // the same holes in every row
          if (causal) {
            std::fill(row + prefix, row + prefix + i + 1, 1);
            continue;
          }
          parent[i] = i == 0 ? -1 : static_cast<int>(rng() % i);
          for (int a = static_cast<int>(i); a >= 0; a = parent[a]) row[prefix + a] = 1;
        }
        if (n_tokens > 4) std::fill(mask.begin() + 3 * n_kv, mask.begin() + 4 * n_kv, 0);  // sees nothing
        const auto k = random_f16(n_kv * kv_row, rng()), v = random_f16(n_kv * kv_row, rng());
        const auto q = random_floats(n_tokens * q_row, rng(), 3.0f);
        ThreadPool pool2(2), pool1(1);
        pool2.set_min_chunk_work(1);  // split even these small shapes between the threads
        std::vector<float> batched2(n_tokens * q_row), batched1(n_tokens * q_row);
        attention(s, q.data(), n_tokens, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv,
                  mask.data(), batched2.data(), pool2);
        attention(s, q.data(), n_tokens, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv,
                  mask.data(), batched1.data(), pool1);
        for (int64_t t = 0; t < n_tokens; ++t) {
          std::vector<float> alone(q_row);
          attention(s, q.data() + t * q_row, 1, k.data(), v.data(), KvLayout::cell_major(s.n_head_kv, s.head_dim), n_kv,
                    mask.data() + t * n_kv, alone.data(), pool1);
          for (int64_t x = 0; x < q_row; ++x) {
            ASSERT_TRUE(same_bits(batched2[t * q_row + x], alone[x]))
                << "heads " << h.n_head << "/" << h.n_head_kv << " prefix " << prefix << " rows " << n_tokens
                << ": row " << t << " element " << x << " (2 threads)";
            ASSERT_TRUE(same_bits(batched1[t * q_row + x], alone[x]))
                << "heads " << h.n_head << "/" << h.n_head_kv << " prefix " << prefix << " rows " << n_tokens
                << ": row " << t << " element " << x << " (1 thread)";
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HeadDims, AttentionSharedPrefix, ::testing::Values(4, 6, 8, 12, 16, 64, 128),
                         [](const auto& info) { return "head_dim_" + std::to_string(info.param); });

}  // namespace
}  // namespace sf
