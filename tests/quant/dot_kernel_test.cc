// SIMD kernels against the scalar reference, for every supported pair, on every instruction
// set this CPU runs (e.g. AVX-512, AVX2, SSE4: the 128-bit code path is the one NEON uses), on
// odd sizes. The integer work is exact in both, so results differ only by fp32 summation
// order; the bound is relative to M = sum |w_i x_i| of the decoded values, the natural scale
// of a rounding error in a sum that may cancel.
#include "quant/dot_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/fp16.h"
#include "hwy/targets.h"
#include "quant_test_util.h"

namespace sf {
namespace {

struct PairCase {
  GgmlType weight, activation;
  double max_relative_error;  // |simd - ref| / M
};

// fp32 summation-order bounds. Measured worst cases (AVX-512, AVX2, SSE4, SSSE3; the sizes
// and seeds below) in parentheses; the bound leaves ~8x room for other targets (NEON) and
// compilers. The float formats compare four fp32 accumulator chains with the reference's
// double sum; the quantised ones sum one fp32 term per block (per 256 values for K-quants).
const PairCase kCases[] = {
    {GgmlType::F32, GgmlType::F32, 1e-6},    // (9.1e-8)
    {GgmlType::F16, GgmlType::F16, 1e-6},    // (5.7e-8)
    {GgmlType::F16, GgmlType::F32, 1e-6},    // (5.7e-8)
    {GgmlType::BF16, GgmlType::BF16, 1e-6},  // (9.1e-9)
    {GgmlType::BF16, GgmlType::F32, 1e-6},   // (5.7e-8)
    {GgmlType::Q4_0, GgmlType::Q8_0, 1e-6},  // (5.3e-8)
    {GgmlType::Q4_1, GgmlType::Q8_1, 1e-6},  // (1.3e-7)
    {GgmlType::Q5_0, GgmlType::Q8_0, 1e-6},  // (1.5e-8)
    {GgmlType::Q5_1, GgmlType::Q8_1, 1e-6},  // (1.1e-7)
    {GgmlType::Q8_0, GgmlType::Q8_0, 1e-6},  // (6.0e-8)
    {GgmlType::Q2_K, GgmlType::Q8_K, 1e-6},  // (1.9e-8)
    {GgmlType::Q3_K, GgmlType::Q8_K, 1e-6},  // (1.9e-8)
    {GgmlType::Q4_K, GgmlType::Q8_K, 1e-6},  // (3.4e-8)
    {GgmlType::Q5_K, GgmlType::Q8_K, 1e-6},  // (2.5e-8)
    {GgmlType::Q6_K, GgmlType::Q8_K, 1e-6},  // (1.3e-8)
};

// Sizes in blocks (of the larger of the two block sizes); float pairs use elements.
std::vector<int64_t> sizes_for(GgmlType weight, GgmlType activation) {
  const int64_t block = std::max(type_info(weight).block_size, type_info(activation).block_size);
  std::vector<int64_t> sizes;
  if (block == 1) {
    for (int64_t n : {1, 3, 7, 9, 15, 33, 129, 32 * 37, 4099, 4129}) sizes.push_back(n);
  } else {
    for (int64_t b : {1, 2, 3, 7, 9, 33, 129}) sizes.push_back(b * block);
    if (block == 32) sizes.push_back(32 * 37);
  }
  return sizes;
}

std::string label(const PairCase& c, int64_t target, int64_t n) {
  return std::string(type_name(c.weight)) + " x " + type_name(c.activation) + " on " + dot_kernel_target_name(target) +
         ", n=" + std::to_string(n);
}

// sum |w_i x_i| over the decoded rows.
double magnitude(GgmlType wt, const std::vector<uint8_t>& w, GgmlType at, const std::vector<uint8_t>& a, int64_t n) {
  const auto wf = test::dequantized(wt, w, n);
  const auto af = test::dequantized(at, a, n);
  double m = 0;
  for (int64_t i = 0; i < n; ++i) m += std::fabs(static_cast<double>(wf[i]) * af[i]);
  return m;
}

TEST(DotKernel, EveryTargetIsListed) {
  const auto targets = dot_kernel_targets();
  ASSERT_FALSE(targets.empty());
  for (int64_t t : targets) std::printf("SIMD target: %s\n", dot_kernel_target_name(t).c_str());
  for (const PairCase& c : kCases) {
    EXPECT_NE(find_dot_kernel(c.weight, c.activation), nullptr) << type_name(c.weight);
    EXPECT_NE(find_dot_kernel_ref(c.weight, c.activation), nullptr) << type_name(c.weight);
    // find_dot_kernel serves the best target's code.
    EXPECT_EQ(find_dot_kernel(c.weight, c.activation)->dot,
              find_dot_kernel_for_target(c.weight, c.activation, targets[0])->dot);
  }
}

TEST(DotKernel, DefaultActivationTypesHaveKernels) {
  for (GgmlType t : test::all_types()) {
    if (!type_info(t).is_weight_type) continue;
    EXPECT_NE(find_dot_kernel(t, default_activation_type(t)), nullptr) << type_name(t);
  }
  EXPECT_EQ(default_activation_type(GgmlType::Q4_0), GgmlType::Q8_0);
  EXPECT_EQ(default_activation_type(GgmlType::Q5_1), GgmlType::Q8_1);
  EXPECT_EQ(default_activation_type(GgmlType::Q6_K), GgmlType::Q8_K);
  EXPECT_EQ(default_activation_type(GgmlType::BF16), GgmlType::BF16);
  EXPECT_EQ(find_dot_kernel(GgmlType::Q4_0, GgmlType::F32), nullptr);
}

TEST(DotKernel, SimdMatchesReference) {
  std::map<std::string, double> worst;  // per pair, for the bound table above
  for (const PairCase& c : kCases) {
    const DotKernel* ref = find_dot_kernel_ref(c.weight, c.activation);
    ASSERT_NE(ref, nullptr);
    for (int64_t target : dot_kernel_targets()) {
      const DotKernel* simd = find_dot_kernel_for_target(c.weight, c.activation, target);
      ASSERT_NE(simd, nullptr) << type_name(c.weight);
      for (int64_t n : sizes_for(c.weight, c.activation)) {
        for (uint32_t seed : {1u, 2u}) {
          const auto wf = test::random_row(n, seed * 101u + static_cast<uint32_t>(n), 0.05f);
          const auto xf = test::random_row(n, seed * 103u + static_cast<uint32_t>(n) + 7u, 2.0f);
          const auto w = test::quantized(c.weight, wf);
          std::vector<uint8_t> a_ref(row_bytes(c.activation, n)), a_simd(a_ref.size());
          ref->quantize_activation(xf.data(), a_ref.data(), n);
          simd->quantize_activation(xf.data(), a_simd.data(), n);
          ASSERT_EQ(a_ref, a_simd) << "activation bytes, " << label(c, target, n);

          const float r = ref->dot(w.data(), a_ref.data(), n);
          const float s = simd->dot(w.data(), a_ref.data(), n);
          const double m = magnitude(c.weight, w, c.activation, a_ref, n);
          const double rel = std::fabs(static_cast<double>(s) - r) / std::max(m, 1e-30);
          double& w_pair = worst[std::string(type_name(c.weight)) + " x " + type_name(c.activation)];
          w_pair = std::max(w_pair, rel);
          EXPECT_LE(rel, c.max_relative_error) << label(c, target, n) << ": simd " << s << " ref " << r << " M " << m;
          const float again = simd->dot(w.data(), a_ref.data(), n);
          ASSERT_EQ(std::memcmp(&s, &again, 4), 0) << "not deterministic: " << label(c, target, n);
        }
      }
    }
  }
  for (const auto& [pair, e] : worst) std::printf("%-12s worst |simd-ref|/M %.2g\n", pair.c_str(), e);
}

// dot_rows must give each row exactly what dot gives it, however rows are grouped.
TEST(DotKernel, DotRowsIsBitIdenticalToDot) {
  for (const PairCase& c : kCases) {
    for (int64_t target : dot_kernel_targets()) {
      const DotKernel* k = find_dot_kernel_for_target(c.weight, c.activation, target);
      const int64_t block = std::max(type_info(c.weight).block_size, type_info(c.activation).block_size);
      const int64_t n = block == 1 ? 131 : 5 * block;
      for (int64_t rows : {1, 3, 4, 5, 9}) {
        const size_t stride = row_bytes(c.weight, n);
        std::vector<uint8_t> w(stride * static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) {
          const auto bytes = test::quantized(c.weight, test::random_row(n, 500u + static_cast<uint32_t>(r)));
          std::memcpy(w.data() + r * stride, bytes.data(), stride);
        }
        const auto xf = test::random_row(n, 77);
        std::vector<uint8_t> a(row_bytes(c.activation, n));
        k->quantize_activation(xf.data(), a.data(), n);
        std::vector<float> out(static_cast<size_t>(rows));
        k->dot_rows(w.data(), stride, rows, a.data(), n, out.data());
        for (int64_t r = 0; r < rows; ++r) {
          const float one = k->dot(w.data() + r * stride, a.data(), n);
          EXPECT_EQ(std::memcmp(&one, &out[static_cast<size_t>(r)], 4), 0)
              << label(c, target, n) << " rows=" << rows << " row " << r;
        }
        // The reference's dot_rows too.
        const DotKernel* ref = find_dot_kernel_ref(c.weight, c.activation);
        ref->dot_rows(w.data(), stride, rows, a.data(), n, out.data());
        EXPECT_EQ(out[0], ref->dot(w.data(), a.data(), n));
      }
    }
  }
}

const PairCase* float_cases_end() { return kCases + 5; }  // kCases starts with the five float pairs

// The float pairs' dot_rows against dot, bit for bit, for every row count 1..37 (whole and
// partial 8-row blocks, all remainders) and n with and without a scalar tail, on every target.
TEST(DotKernel, FloatDotRowsIsBitIdenticalToDotForEveryRowCount) {
  for (const PairCase* c = kCases; c != float_cases_end(); ++c) {
    ASSERT_EQ(type_info(c->weight).block_size, 1);
    const DotKernel* ref = find_dot_kernel_ref(c->weight, c->activation);
    for (int64_t target : dot_kernel_targets()) {
      const DotKernel* k = find_dot_kernel_for_target(c->weight, c->activation, target);
      for (int64_t n : {1, 7, 16, 64, 96, 172, 200, 275, 1031}) {
        const int64_t max_rows = 37;
        const size_t stride = row_bytes(c->weight, n);
        std::vector<uint8_t> w(stride * max_rows);
        for (int64_t r = 0; r < max_rows; ++r) {
          const auto bytes = test::quantized(c->weight, test::random_row(n, 900u + static_cast<uint32_t>(r), 0.05f));
          std::memcpy(w.data() + r * stride, bytes.data(), stride);
        }
        const auto xf = test::random_row(n, 78, 2.0f);
        std::vector<uint8_t> a(row_bytes(c->activation, n));
        k->quantize_activation(xf.data(), a.data(), n);
        for (int64_t rows = 1; rows <= max_rows; ++rows) {
          std::vector<float> out(static_cast<size_t>(rows) + 1, -1.0f);
          k->dot_rows(w.data(), stride, rows, a.data(), n, out.data());
          ASSERT_EQ(out[static_cast<size_t>(rows)], -1.0f) << label(*c, target, n) << " rows=" << rows;
          for (int64_t r = 0; r < rows; ++r) {
            const float one = k->dot(w.data() + r * stride, a.data(), n);
            ASSERT_EQ(test::float_bits(out[static_cast<size_t>(r)]), test::float_bits(one))
                << label(*c, target, n) << " rows=" << rows << " row " << r;
            const std::vector<uint8_t> row(w.begin() + r * stride, w.begin() + (r + 1) * stride);
            const double m = magnitude(c->weight, row, c->activation, a, n);
            ASSERT_LE(std::fabs(static_cast<double>(one) - ref->dot(row.data(), a.data(), n)),
                      c->max_relative_error * m + 1e-30)
                << label(*c, target, n) << " row " << r;
          }
        }
      }
    }
  }
}

// The float dot's per-element definition (dot_simd_float.cc), written out in scalar code for
// `lanes` lanes: four accumulator chains over whole chunks (the chunks past the last group of
// four into the first), (a0 + a1) + (a2 + a3), the halving tree over the lanes, then the
// scalar tail. `fused`: the target's MulAdd rounds once (FMA) rather than twice.
float float_dot_definition(const std::vector<float>& w, const std::vector<float>& x, int64_t lanes, bool fused) {
  const auto mul_add = [fused](float a, float b, float c) {
    if (fused) return std::fma(a, b, c);
    volatile float product = a * b;  // volatile: the compiler may not fuse the two
    return product + c;
  };
  const int64_t n = static_cast<int64_t>(w.size());
  std::vector<float> acc(static_cast<size_t>(4 * lanes), 0.0f);
  int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    for (int64_t k = 0; k < 4 * lanes; ++k) acc[k] = mul_add(w[i + k], x[i + k], acc[k]);
  }
  for (; i + lanes <= n; i += lanes) {
    for (int64_t j = 0; j < lanes; ++j) acc[j] = mul_add(w[i + j], x[i + j], acc[j]);
  }
  std::vector<float> s(static_cast<size_t>(lanes));
  for (int64_t j = 0; j < lanes; ++j) s[j] = (acc[j] + acc[lanes + j]) + (acc[2 * lanes + j] + acc[3 * lanes + j]);
  for (int64_t width = lanes; width > 1; width /= 2) {
    for (int64_t j = 0; j < width / 2; ++j) s[j] = s[j] + s[j + width / 2];
  }
  float sum = s[0];
  for (; i < n; ++i) sum = mul_add(w[i], x[i], sum);
  return sum;
}

// The float dots follow that definition exactly on the x86 and Arm NEON targets (whose lane
// counts and MulAdd are known here; aarch64's NEON MulAdd is fused), so a change of order
// made consistently in dot, dot_rows and the tiles (which the bit-identity tests cannot see)
// fails too.
TEST(DotKernel, FloatDotFollowsItsDefinition) {
  const std::map<std::string, std::pair<int64_t, bool>> kLanesAndFused = {{"AVX3_DL", {16, true}}, {"AVX3", {16, true}},
                                                                          {"AVX2", {8, true}},     {"SSE4", {4, false}},
                                                                          {"SSSE3", {4, false}},   {"NEON", {4, true}}};
  int checked = 0;
  for (int64_t target : dot_kernel_targets()) {
    const auto it = kLanesAndFused.find(dot_kernel_target_name(target));
    if (it == kLanesAndFused.end()) continue;  // SCALAR: the reference; others: not known here
    const auto [lanes, fused] = it->second;
    for (const PairCase* c = kCases; c != float_cases_end(); ++c) {
      const DotKernel* k = find_dot_kernel_for_target(c->weight, c->activation, target);
      for (int64_t n : {1, 3, 15, 16, 64, 96, 172, 200, 275, 1031}) {
        const auto w = test::quantized(c->weight, test::random_row(n, 40u + static_cast<uint32_t>(n), 0.05f));
        std::vector<uint8_t> a(row_bytes(c->activation, n));
        k->quantize_activation(test::random_row(n, 41u + static_cast<uint32_t>(n), 2.0f).data(), a.data(), n);
        const float want = float_dot_definition(test::dequantized(c->weight, w, n),
                                                test::dequantized(c->activation, a, n), lanes, fused);
        EXPECT_EQ(test::float_bits(k->dot(w.data(), a.data(), n)), test::float_bits(want)) << label(*c, target, n);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// The legacy formats' AVX3_DL (VNNI) dot as defined in quant/vnni_q-inl.h, from the block
// bytes (ggml's layouts): block b's exact integer dot isum_b goes to chain (b / 2) mod 4 as
// fma(float(isum_b), fl(d_w * d_x), chain); Q4_1/Q5_1 also put fma(m_w, s_x, mchain) in
// mchain (b / 2) mod 4; the result is ChainSum(chains) (+ ChainSum(mchains)), ChainSum(c) =
// (c0 + c2) + (c1 + c3).
struct LegacyLayout {
  GgmlType type, act_type;
  size_t block_bytes, qh_at, qs_at;  // qh_at 0: no fifth bits
  int offset;                        // the level's zero: q - offset is the integer weight
  bool has_min;                      // m (fp16) at byte 2
};
const LegacyLayout kLegacyLayouts[] = {
    {GgmlType::Q4_0, GgmlType::Q8_0, 18, 0, 2, 8, false},  {GgmlType::Q4_1, GgmlType::Q8_1, 20, 0, 4, 0, true},
    {GgmlType::Q5_0, GgmlType::Q8_0, 22, 2, 6, 16, false}, {GgmlType::Q5_1, GgmlType::Q8_1, 24, 4, 8, 0, true},
    {GgmlType::Q8_0, GgmlType::Q8_0, 34, 0, 2, 0, false},
};

uint16_t u16_at(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

float vnni_dot_definition(const LegacyLayout& f, const uint8_t* w, const uint8_t* x, int64_t n) {
  const size_t x_block = f.act_type == GgmlType::Q8_1 ? 36 : 34, x_qs = f.act_type == GgmlType::Q8_1 ? 4 : 2;
  float chains[4] = {0, 0, 0, 0}, mchains[4] = {0, 0, 0, 0};
  for (int64_t b = 0; b < n / 32; ++b) {
    const uint8_t* wb = w + b * f.block_bytes;
    const uint8_t* xb = x + b * x_block;
    uint32_t qh = 0;
    if (f.qh_at != 0) std::memcpy(&qh, wb + f.qh_at, 4);
    int32_t isum = 0;
    for (int j = 0; j < 32; ++j) {
      int q;
      if (f.type == GgmlType::Q8_0) {
        q = static_cast<int8_t>(wb[f.qs_at + j]);
      } else {
        q = (j < 16 ? wb[f.qs_at + j] & 0xF : wb[f.qs_at + j - 16] >> 4) | static_cast<int>(((qh >> j) & 1) << 4);
      }
      isum += (q - f.offset) * static_cast<int8_t>(xb[x_qs + j]);
    }
    const int chain = static_cast<int>((b / 2) % 4);
    const float p = fp16_to_fp32(u16_at(wb)) * fp16_to_fp32(u16_at(xb));
    chains[chain] = std::fma(static_cast<float>(isum), p, chains[chain]);
    if (f.has_min) {
      mchains[chain] = std::fma(fp16_to_fp32(u16_at(wb + 2)), fp16_to_fp32(u16_at(xb + 2)), mchains[chain]);
    }
  }
  const float sum = (chains[0] + chains[2]) + (chains[1] + chains[3]);
  return f.has_min ? sum + ((mchains[0] + mchains[2]) + (mchains[1] + mchains[3])) : sum;
}

// The AVX3_DL target's legacy dots are the VNNI kernels and follow that definition bit for
// bit (the tiles' bit-identity tests then pin the tiles to it too). A CPU with AVX512-VNNI
// must list the target, so this cannot pass by skipping the VNNI code on the machines that
// run it.
TEST(DotKernel, LegacyVnniDotFollowsItsDefinition) {
  bool vnni = false;
  for (int64_t target : dot_kernel_targets()) vnni |= dot_kernel_target_name(target) == "AVX3_DL";
  if (!vnni) {
    ASSERT_FALSE(hwy::SupportedTargets() & HWY_AVX3_DL) << "AVX3_DL supported but not listed";
    GTEST_SKIP() << "no AVX3_DL target on this CPU";
  }
  const int64_t target = HWY_AVX3_DL;
  for (const LegacyLayout& f : kLegacyLayouts) {
    const DotKernel* k = find_dot_kernel_for_target(f.type, f.act_type, target);
    ASSERT_NE(k, nullptr) << type_name(f.type);
    ASSERT_EQ(type_info(f.type).block_bytes, f.block_bytes) << type_name(f.type);
    // 1 to 37 blocks: partial and whole 16-block segments of the one-row kernel, odd counts.
    for (int64_t blocks : {1, 2, 3, 5, 8, 9, 15, 16, 17, 31, 33, 37}) {
      const int64_t n = 32 * blocks;
      for (uint32_t seed : {1u, 2u}) {
        const auto w = test::quantized(f.type, test::random_row(n, seed * 31u + static_cast<uint32_t>(n), 0.05f));
        std::vector<uint8_t> a(row_bytes(f.act_type, n));
        k->quantize_activation(test::random_row(n, seed * 37u + static_cast<uint32_t>(n), 2.0f).data(), a.data(), n);
        const float want = vnni_dot_definition(f, w.data(), a.data(), n);
        EXPECT_EQ(test::float_bits(k->dot(w.data(), a.data(), n)), test::float_bits(want))
            << type_name(f.type) << " n=" << n << " seed " << seed;
        // dot_rows (four rows at a time, then one) on copies of the row.
        std::vector<uint8_t> rows;
        for (int r = 0; r < 5; ++r) rows.insert(rows.end(), w.begin(), w.end());
        std::vector<float> out(5);
        k->dot_rows(rows.data(), w.size(), 5, a.data(), n, out.data());
        for (float o : out) EXPECT_EQ(test::float_bits(o), test::float_bits(want)) << type_name(f.type) << " n=" << n;
      }
    }
  }
}

// Blocks made of random bytes reach every level, scale and bit pattern the formats allow
// (e.g. Q6_K scale -128, all-ones nibbles), which quantised Gaussian rows rarely do: the
// SIMD integer paths (int16 products, packed sub-block sums) must not overflow anywhere.
// fp16 scale fields get finite random values; Q8 activations get consistent sums.
struct Fp16Field {
  GgmlType type;
  std::vector<size_t> offsets;  // byte offsets of fp16 fields within a block
};
const Fp16Field kFp16Fields[] = {
    {GgmlType::Q4_0, {0}},    {GgmlType::Q4_1, {0, 2}},   {GgmlType::Q5_0, {0}},   {GgmlType::Q5_1, {0, 2}},
    {GgmlType::Q8_0, {0}},    {GgmlType::Q2_K, {80, 82}}, {GgmlType::Q3_K, {108}}, {GgmlType::Q4_K, {0, 2}},
    {GgmlType::Q5_K, {0, 2}}, {GgmlType::Q6_K, {208}},
};

std::vector<uint8_t> random_weight_bytes(GgmlType type, int64_t n, std::mt19937& rng, bool all_ones) {
  std::vector<uint8_t> bytes(row_bytes(type, n));
  for (auto& b : bytes) b = all_ones ? 0xFF : static_cast<uint8_t>(rng());
  const auto& info = type_info(type);
  std::uniform_real_distribution<float> scale(-1.0f, 1.0f);
  for (const Fp16Field& f : kFp16Fields) {
    if (f.type != type) continue;
    for (size_t blk = 0; blk < bytes.size() / info.block_bytes; ++blk) {
      for (size_t off : f.offsets) {
        const uint16_t h = fp32_to_fp16(scale(rng));
        std::memcpy(&bytes[blk * info.block_bytes + off], &h, 2);
      }
    }
  }
  return bytes;
}

std::vector<uint8_t> random_activation_bytes(GgmlType type, int64_t n, std::mt19937& rng, int fixed_q) {
  std::vector<uint8_t> bytes(row_bytes(type, n));
  std::uniform_int_distribution<int> q(-127, 127);
  std::uniform_real_distribution<float> scale(-0.1f, 0.1f);
  const auto& info = type_info(type);
  for (size_t blk = 0; blk < bytes.size() / info.block_bytes; ++blk) {
    uint8_t* p = &bytes[blk * info.block_bytes];
    const float d = scale(rng);
    std::vector<int8_t> qs(static_cast<size_t>(info.block_size));
    for (auto& v : qs) v = static_cast<int8_t>(fixed_q != 0 ? fixed_q : q(rng));
    if (type == GgmlType::Q8_K) {
      std::memcpy(p, &d, 4);
      std::memcpy(p + 4, qs.data(), 256);
      for (int g = 0; g < 16; ++g) {
        int16_t sum = 0;
        for (int l = 0; l < 16; ++l) sum = static_cast<int16_t>(sum + qs[16 * g + l]);
        std::memcpy(p + 260 + 2 * g, &sum, 2);
      }
    } else {
      const uint16_t h = fp32_to_fp16(d);
      std::memcpy(p, &h, 2);
      const size_t qs_at = type == GgmlType::Q8_1 ? 4 : 2;
      std::memcpy(p + qs_at, qs.data(), 32);
      if (type == GgmlType::Q8_1) {
        int sum = 0;
        for (int8_t v : qs) sum += v;
        const uint16_t s = fp32_to_fp16(fp16_to_fp32(h) * static_cast<float>(sum));
        std::memcpy(p + 2, &s, 2);
      }
    }
  }
  return bytes;
}

TEST(DotKernel, RandomBlockBytesMatchReference) {
  std::mt19937 rng(1234);
  for (const PairCase& c : kCases) {
    if (type_info(c.weight).block_size == 1) continue;
    const DotKernel* ref = find_dot_kernel_ref(c.weight, c.activation);
    const int64_t block = type_info(c.activation).block_size == 256 ? 256 : 32;
    for (int64_t target : dot_kernel_targets()) {
      const DotKernel* simd = find_dot_kernel_for_target(c.weight, c.activation, target);
      for (int variant = 0; variant < 6; ++variant) {
        const int64_t n = block * (variant % 2 == 0 ? 3 : 9);
        // 0/1: random bytes; 2/3: all-ones weights vs +127 / -127; 4/5: random vs -127.
        const bool all_ones = variant == 2 || variant == 3;
        const int fixed_q = variant == 2 ? 127 : (variant >= 3 ? -127 : 0);
        const auto w = random_weight_bytes(c.weight, n, rng, all_ones);
        const auto a = random_activation_bytes(c.activation, n, rng, fixed_q);
        const float r = ref->dot(w.data(), a.data(), n);
        const float s = simd->dot(w.data(), a.data(), n);
        const double m = magnitude(c.weight, w, c.activation, a, n);
        EXPECT_LE(std::fabs(static_cast<double>(s) - r), c.max_relative_error * m + 1e-30)
            << label(c, target, n) << " variant " << variant << ": simd " << s << " ref " << r;
      }
    }
  }
}

// Activation quantisers on the rounding corner cases: exact halves (roundf rounds them away
// from zero for Q8_0/Q8_1, Q8_K to even), ties for the largest magnitude (the first one wins
// and sets the sign of Q8_K's scale), zeros, denormal-sized blocks.
TEST(DotKernel, ActivationQuantizersMatchOnRoundingCorners) {
  std::vector<std::vector<float>> rows;
  {
    std::vector<float> halves(512);
    for (size_t i = 0; i < halves.size(); ++i) {
      halves[i] = static_cast<float>(static_cast<int>(i % 64) - 32) + 0.5f;
    }
    for (size_t b = 0; b < halves.size(); b += 32) halves[b + 5] = 127.0f;  // d = 1 exactly
    rows.push_back(halves);
    std::vector<float> tie(512, 0.25f);
    tie[3] = 3.0f;
    tie[9] = -3.0f;  // equal magnitude, later: must not win
    tie[300] = -3.0f;
    tie[301] = 3.0f;
    rows.push_back(tie);
    std::vector<float> mixed = test::random_row(512, 9, 1.0f);
    for (size_t i = 0; i < 32; ++i) mixed[i] = 0.0f;        // an all-zero block
    for (size_t i = 256; i < 288; ++i) mixed[i] *= 1e-30f;  // tiny block
    rows.push_back(mixed);
  }
  for (GgmlType act : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K}) {
    const GgmlType weight = act == GgmlType::Q8_K   ? GgmlType::Q4_K
                            : act == GgmlType::Q8_1 ? GgmlType::Q4_1
                                                    : GgmlType::Q4_0;
    for (int64_t target : dot_kernel_targets()) {
      const DotKernel* k = find_dot_kernel_for_target(weight, act, target);
      for (const auto& x : rows) {
        const int64_t n = static_cast<int64_t>(x.size());
        std::vector<uint8_t> want(row_bytes(act, n)), got(want.size());
        quantize_row(act, x.data(), want.data(), n);
        k->quantize_activation(x.data(), got.data(), n);
        EXPECT_EQ(want, got) << type_name(act) << " on " << dot_kernel_target_name(target);
      }
    }
  }
}

}  // namespace
}  // namespace sf
