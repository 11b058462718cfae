// Hand-built blocks with known decoded values, so the block layouts are pinned by data and
// not only by round trips (which a consistently wrong encoder/decoder pair would pass).
// Expected values follow ggml's block definitions (ggml-common.h / ggml-quants.c); each
// test spells out where element e's bits live. llama_cpp_match_test.cc adds files written
// by llama-quantize for Q4_0, Q8_0, Q4_K and Q6_K.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/dequantize.h"
#include "quant/ggml_type.h"

namespace sf {
namespace {

constexpr uint16_t kHalfOne = 0x3C00, kHalfTwo = 0x4000, kHalfHalf = 0x3800, kHalfQuarter = 0x3400,
                   kHalfMinusTwo = 0xC000;

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) { std::memcpy(&b[at], &v, 2); }

std::vector<float> decode(GgmlType type, const std::vector<uint8_t>& block) {
  const int64_t n = type_info(type).block_size;
  EXPECT_EQ(block.size(), type_info(type).block_bytes);
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(type, block.data(), y.data(), n);
  return y;
}

TEST(KnownAnswer, BlockSizesMatchGgml) {
  struct Size {
    GgmlType type;
    int64_t block;
    size_t bytes;
  };
  // sizeof(block_*) in ggml-common.h.
  const Size kSizes[] = {{GgmlType::F32, 1, 4},      {GgmlType::F16, 1, 2},      {GgmlType::BF16, 1, 2},
                         {GgmlType::Q4_0, 32, 18},   {GgmlType::Q4_1, 32, 20},   {GgmlType::Q5_0, 32, 22},
                         {GgmlType::Q5_1, 32, 24},   {GgmlType::Q8_0, 32, 34},   {GgmlType::Q8_1, 32, 36},
                         {GgmlType::Q2_K, 256, 84},  {GgmlType::Q3_K, 256, 110}, {GgmlType::Q4_K, 256, 144},
                         {GgmlType::Q5_K, 256, 176}, {GgmlType::Q6_K, 256, 210}, {GgmlType::Q8_K, 256, 292}};
  for (const Size& s : kSizes) {
    EXPECT_EQ(type_info(s.type).block_size, s.block) << type_name(s.type);
    EXPECT_EQ(type_info(s.type).block_bytes, s.bytes) << type_name(s.type);
  }
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::Q6_K), 14u);
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::BF16), 30u);
  EXPECT_EQ(row_bytes(GgmlType::Q4_K, 4096), 16u * 144u);
}

TEST(KnownAnswer, FloatFormats) {
  const uint16_t halves[] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x3555};
  const float want[] = {1.0f, -2.0f, 65504.0f, 5.9604645e-08f, -0.0f, 0.33325195f};
  std::vector<float> y(6);
  dequantize_row(GgmlType::F16, halves, y.data(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], want[i]) << i;
  std::vector<uint16_t> back(6);
  quantize_row(GgmlType::F16, want, back.data(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back[i], halves[i]) << i;

  const uint16_t bf[] = {0x3F80, 0xC040, 0x4049};
  std::vector<float> z(3);
  dequantize_row(GgmlType::BF16, bf, z.data(), 3);
  EXPECT_EQ(z[0], 1.0f);
  EXPECT_EQ(z[1], -3.0f);
  EXPECT_EQ(z[2], 3.140625f);
  const float pi = 3.14159265f;  // rounds to nearest: 0x4049
  uint16_t pb;
  quantize_row(GgmlType::BF16, &pi, &pb, 1);
  EXPECT_EQ(pb, 0x4049);
}

// Q4_0: d = 1, qs[j] = j | (15 - j) << 4: elements 0..15 are the low nibbles (j - 8),
// 16..31 the high nibbles (7 - j).
TEST(KnownAnswer, Q4_0) {
  std::vector<uint8_t> b(18);
  put16(b, 0, kHalfOne);
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = decode(GgmlType::Q4_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], static_cast<float>(j - 8)) << j;
    EXPECT_EQ(y[j + 16], static_cast<float>(7 - j)) << j;
  }
  // Quantising those values gives the block back: the -8 sets d = -8 / -8 = 1.
  std::vector<uint8_t> q(18);
  quantize_row(GgmlType::Q4_0, y.data(), q.data(), 32);
  EXPECT_EQ(q, b);
}

// Q4_1: d = 0.5, m = -2: x = 0.5 q - 2.
TEST(KnownAnswer, Q4_1) {
  std::vector<uint8_t> b(20);
  put16(b, 0, kHalfHalf);
  put16(b, 2, kHalfMinusTwo);
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = decode(GgmlType::Q4_1, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * j - 2.0f) << j;
    EXPECT_EQ(y[j + 16], 0.5f * (15 - j) - 2.0f) << j;
  }
}

// Q5_0/Q5_1: bit e of the little-endian qh word is the fifth bit of element e.
TEST(KnownAnswer, Q5_0AndQ5_1) {
  const uint32_t qh = 0xA5C3F00Fu;
  for (GgmlType type : {GgmlType::Q5_0, GgmlType::Q5_1}) {
    const bool has_min = type == GgmlType::Q5_1;
    std::vector<uint8_t> b(type_info(type).block_bytes);
    put16(b, 0, kHalfTwo);
    if (has_min) put16(b, 2, kHalfHalf);
    const size_t qh_at = has_min ? 4 : 2;
    std::memcpy(&b[qh_at], &qh, 4);
    for (int j = 0; j < 16; ++j) b[qh_at + 4 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    const auto y = decode(type, b);
    for (int e = 0; e < 32; ++e) {
      const int nibble = e < 16 ? e : 15 - (e - 16);
      const int q = nibble | static_cast<int>(((qh >> e) & 1) << 4);
      const float want = has_min ? 2.0f * q + 0.5f : 2.0f * (q - 16);
      EXPECT_EQ(y[e], want) << type_name(type) << " element " << e;
    }
  }
}

// Q8_0 / Q8_1: x = d * qs; Q8_1's s = d * sum(qs) is metadata for the dot product.
TEST(KnownAnswer, Q8_0AndQ8_1) {
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q8_1}) {
    std::vector<uint8_t> b(type_info(type).block_bytes);
    put16(b, 0, kHalfQuarter);
    const size_t qs_at = type == GgmlType::Q8_1 ? 4 : 2;
    for (int j = 0; j < 32; ++j) b[qs_at + j] = static_cast<uint8_t>(static_cast<int8_t>(8 * j - 127));
    const auto y = decode(type, b);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.25f * (8 * j - 127)) << j;
  }
  // Quantiser: amax 127 gives d = 1 exactly; roundf sends halves away from zero.
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 0.49f;
  std::vector<uint8_t> q(36);
  quantize_row(GgmlType::Q8_1, x.data(), q.data(), 32);
  EXPECT_EQ(fp16_to_fp32(static_cast<uint16_t>(q[0] | (q[1] << 8))), 1.0f);
  EXPECT_EQ(static_cast<int8_t>(q[4 + 1]), 3);
  EXPECT_EQ(static_cast<int8_t>(q[4 + 2]), -3);
  EXPECT_EQ(static_cast<int8_t>(q[4 + 3]), 0);
  EXPECT_EQ(fp16_to_fp32(static_cast<uint16_t>(q[2] | (q[3] << 8))), 127.0f);  // s = d * 127
}

// Q8_K: fp32 d, then qs[256], then int16 group sums. The largest magnitude maps to -127,
// keeping its sign in d; ties round to even.
TEST(KnownAnswer, Q8_K) {
  std::vector<float> x(256, 0.0f);
  x[10] = -127.0f;  // largest magnitude, first: iscale = -127 / -127 = 1, d = 1
  x[11] = 127.0f;   // same magnitude, later: does not decide the sign
  x[0] = 63.5f;     // ties round to even
  x[12] = 1.5f;
  x[13] = 2.5f;
  std::vector<uint8_t> q(292);
  quantize_row(GgmlType::Q8_K, x.data(), q.data(), 256);
  float d;
  std::memcpy(&d, q.data(), 4);
  EXPECT_EQ(d, 1.0f);
  const auto* qs = reinterpret_cast<const int8_t*>(q.data() + 4);
  EXPECT_EQ(qs[10], -127);
  EXPECT_EQ(qs[11], 127);
  EXPECT_EQ(qs[0], 64);
  EXPECT_EQ(qs[12], 2);
  EXPECT_EQ(qs[13], 2);
  int16_t bsum0, bsum1;
  std::memcpy(&bsum0, q.data() + 260, 2);
  std::memcpy(&bsum1, q.data() + 262, 2);
  EXPECT_EQ(bsum0, 64 - 127 + 127 + 2 + 2);
  EXPECT_EQ(bsum1, 0);
  // The sign of the first maximum decides d's sign: here it is positive.
  x[10] = 127.0f;
  x[11] = -127.0f;
  quantize_row(GgmlType::Q8_K, x.data(), q.data(), 256);
  std::memcpy(&d, q.data(), 4);
  EXPECT_EQ(d, -1.0f);
  EXPECT_EQ(qs[10], -127);
  std::vector<float> y(256);
  dequantize_row(GgmlType::Q8_K, q.data(), y.data(), 256);
  EXPECT_EQ(y[10], 127.0f);
  EXPECT_EQ(y[0], 64.0f);
}

// Q2_K: scales[j] = scale (low nibble) | min (high nibble) of sub-block j (16 elements);
// element 32k + l of half h is bits 2k..2k+1 of qs[32h + l]; x = d * scale * q - dmin * min.
TEST(KnownAnswer, Q2_K) {
  std::vector<uint8_t> b(84);
  for (int j = 0; j < 16; ++j) b[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  for (int i = 0; i < 64; ++i) b[16 + i] = static_cast<uint8_t>(i * 37 + 11);
  put16(b, 80, kHalfOne);   // d
  put16(b, 82, kHalfHalf);  // dmin
  const auto y = decode(GgmlType::Q2_K, b);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32, sub = e / 16;
    const int q = (b[16 + 32 * h + l] >> (2 * k)) & 3;
    EXPECT_FLOAT_EQ(y[e], 1.0f * sub * q - 0.5f * (15 - sub)) << e;
  }
}

// Q3_K: hmask[32], qs[64], scales[12], d. Six-bit scales (stored + 32): low nibble of scale j
// in scales[j % 8] (j < 8 low, else high nibble), top two bits in scales[8 + j % 4] at bit
// 2 * (j / 4). Element 32k + l of half h: low bits (qs[32h + l] >> 2k) & 3, minus 4 unless
// hmask[l] bit 4h + k is set.
TEST(KnownAnswer, Q3_K) {
  std::vector<uint8_t> b(110);
  for (int l = 0; l < 32; ++l) b[l] = static_cast<uint8_t>(l * 73 + 5);       // hmask
  for (int i = 0; i < 64; ++i) b[32 + i] = static_cast<uint8_t>(i * 29 + 3);  // qs
  int scale[16];
  for (int j = 0; j < 16; ++j) {
    scale[j] = 4 * j - 32;  // -32 .. 28, all bit patterns of the top two bits
    const int stored = scale[j] + 32;
    b[96 + j % 8] |= static_cast<uint8_t>((stored & 0xF) << (j < 8 ? 0 : 4));
    b[96 + 8 + j % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (j / 4)));
  }
  put16(b, 108, kHalfTwo);
  const auto y = decode(GgmlType::Q3_K, b);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    const int low = (b[32 + 32 * h + l] >> (2 * k)) & 3;
    const bool high = (b[l] >> (4 * h + k)) & 1;
    EXPECT_FLOAT_EQ(y[e], 2.0f * scale[e / 16] * (low - (high ? 0 : 4))) << e;
  }
}

// Q4_K/Q5_K scales[12]: scale j / min j (6 bits) for j < 4 in bytes j / j + 4; for j >= 4
// the low nibbles in byte j + 4 (scale low, min high) and the top two bits in bytes j - 4
// (scale) and j (min), bits 6..7.
void pack_k4_scales(const int* scale, const int* min, uint8_t* s) {
  std::memset(s, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] |= static_cast<uint8_t>(scale[j]);
      s[j + 4] |= static_cast<uint8_t>(min[j]);
    } else {
      s[j + 4] = static_cast<uint8_t>((scale[j] & 0xF) | ((min[j] & 0xF) << 4));
      s[j - 4] |= static_cast<uint8_t>((scale[j] >> 4) << 6);
      s[j] |= static_cast<uint8_t>((min[j] >> 4) << 6);
    }
  }
}

// Q4_K: d, dmin, scales[12], qs[128]; element l of 64-group g is the low nibble of
// qs[32g + l] (sub-block 2g), element 32 + l the high nibble (sub-block 2g + 1).
// Q5_K adds qh[32]: bit s of qh[l] is the fifth bit of element l of sub-block s.
// The SIMD kernels read Q3_K's 16 scales four at a time; every byte pattern of the 12
// packed bytes' fields must give unpack_scale_q3_k's values (+ 32).
TEST(KnownAnswer, Q3_KScaleWordsMatchTheOneAtATimeUnpack) {
  uint64_t state = 1;
  for (int trial = 0; trial < 2000; ++trial) {
    uint8_t packed[12];
    for (uint8_t& b : packed) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      b = static_cast<uint8_t>(state >> 56);
    }
    uint64_t low, high;
    quant::unpack_scales_q3_k_words(packed, &low, &high);
    for (int j = 0; j < 16; ++j) {
      const int word_byte = static_cast<int>(((j < 8 ? low : high) >> (8 * (j % 8))) & 0xFF);
      ASSERT_EQ(word_byte - 32, quant::unpack_scale_q3_k(j, packed)) << "scale " << j << ", trial " << trial;
    }
  }
}

TEST(KnownAnswer, Q4_KAndQ5_K) {
  int scale[8], min[8];
  for (int j = 0; j < 8; ++j) {
    scale[j] = 8 * j + 5;  // up to 61: exercises the top bits
    min[j] = 63 - 7 * j;
  }
  for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q5_K}) {
    const bool five = type == GgmlType::Q5_K;
    std::vector<uint8_t> b(type_info(type).block_bytes);
    put16(b, 0, kHalfHalf);     // d
    put16(b, 2, kHalfQuarter);  // dmin
    pack_k4_scales(scale, min, &b[4]);
    const size_t qs_at = five ? 48 : 16;
    if (five) {
      for (int l = 0; l < 32; ++l) b[16 + l] = static_cast<uint8_t>(l * 53 + 17);
    }
    for (int i = 0; i < 128; ++i) b[qs_at + i] = static_cast<uint8_t>(i * 31 + 7);
    const auto y = decode(type, b);
    for (int e = 0; e < 256; ++e) {
      const int g = e / 64, l = e % 32, sub = e / 32;
      const uint8_t byte = b[qs_at + 32 * g + l];
      int q = (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
      if (five) q |= ((b[16 + l] >> sub) & 1) << 4;
      EXPECT_FLOAT_EQ(y[e], 0.5f * scale[sub] * q - 0.25f * min[sub]) << type_name(type) << " " << e;
    }
  }
}

// Q6_K: ql[128], qh[64], int8 scales[16], d. Element 32k + l of half h: low four bits from
// ql[64h + 32(k & 1) + l] (low nibble for k < 2, high for k >= 2), high two bits
// (qh[32h + l] >> 2k) & 3; x = d * scale[e / 16] * (q - 32).
TEST(KnownAnswer, Q6_K) {
  std::vector<uint8_t> b(210);
  for (int i = 0; i < 128; ++i) b[i] = static_cast<uint8_t>(i * 45 + 9);
  for (int i = 0; i < 64; ++i) b[128 + i] = static_cast<uint8_t>(i * 77 + 1);
  for (int j = 0; j < 16; ++j) b[192 + j] = static_cast<uint8_t>(static_cast<int8_t>(17 * j - 128));
  put16(b, 208, kHalfQuarter);
  const auto y = decode(GgmlType::Q6_K, b);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    const uint8_t lbyte = b[64 * h + 32 * (k & 1) + l];
    const int low = k < 2 ? (lbyte & 0xF) : (lbyte >> 4);
    const int high = (b[128 + 32 * h + l] >> (2 * k)) & 3;
    const int q = (low | (high << 4)) - 32;
    EXPECT_FLOAT_EQ(y[e], 0.25f * (17 * (e / 16) - 128) * q) << e;
  }
}

}  // namespace
}  // namespace sf
