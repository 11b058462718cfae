// K-quant decoders (scalar reference). Element order inside a 256-element super-block:
//  Q2_K/Q3_K: two 128-element halves; in half h, element 32k + l (k = 0..3, l = 0..31) is
//             bits 2k..2k+1 of qs[32h + l]; Q3_K adds hmask[l] bit 4h + k.
//  Q4_K/Q5_K: four 64-element groups; in group g, element l is the low nibble and element
//             32 + l the high nibble of qs[32g + l]; Q5_K adds qh[l] bits 2g and 2g + 1.
//  Q6_K:      two halves; element 32k + l of half h takes ql[64h + l + 32 (k & 1)] (low nibble
//             for k < 2, high for k >= 2) and bits 2k of qh[32h + l].
#include <cstdint>

#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/quant_internal.h"

namespace sf::quant {
namespace {

int64_t num_superblocks(int64_t n) {
  SF_CHECK(n % kQK_K == 0, "%lld elements is not a multiple of 256", static_cast<long long>(n));
  return n / kQK_K;
}

}  // namespace

void dequantize_row_q2_k(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ2_K*>(src);
  const int64_t nb = num_superblocks(n);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const float min = fp16_to_fp32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    int is = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {
          const uint8_t sc = x[i].scales[is++];
          const float dl = d * (sc & 0xF);
          const float ml = min * (sc >> 4);
          for (int l = 0; l < 16; ++l) *y++ = dl * ((q[16 * part + l] >> shift) & 3) - ml;
        }
      }
    }
  }
}

void dequantize_row_q3_k(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ3_K*>(src);
  const int64_t nb = num_superblocks(n);
  for (int64_t i = 0; i < nb; ++i) {
    const float d_all = fp16_to_fp32(x[i].d);
    const uint8_t* q = x[i].qs;
    const uint8_t* hm = x[i].hmask;
    int is = 0;
    uint8_t m = 1;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
        for (int part = 0; part < 2; ++part) {
          const float dl = d_all * unpack_scale_q3_k(is++, x[i].scales);
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            *y++ = dl * (((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
          }
        }
      }
    }
  }
}

void dequantize_row_q4_k(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(src);
  const int64_t nb = num_superblocks(n);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const float min = fp16_to_fp32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    for (int g = 0; g < 4; ++g, q += 32) {
      uint8_t sc, m;
      unpack_scale_min_k4(2 * g, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = min * m;
      unpack_scale_min_k4(2 * g + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
    }
  }
}

void dequantize_row_q5_k(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(src);
  const int64_t nb = num_superblocks(n);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const float min = fp16_to_fp32(x[i].dmin);
    const uint8_t* ql = x[i].qs;
    const uint8_t* qh = x[i].qh;
    for (int g = 0; g < 4; ++g, ql += 32) {
      uint8_t sc, m;
      unpack_scale_min_k4(2 * g, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = min * m;
      unpack_scale_min_k4(2 * g + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = min * m;
      const uint8_t u1 = static_cast<uint8_t>(1 << (2 * g)), u2 = static_cast<uint8_t>(2 << (2 * g));
      for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    }
  }
}

void dequantize_row_q6_k(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(src);
  const int64_t nb = num_superblocks(n);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
    }
  }
}

void dequantize_row_q8_k(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ8_K*>(src);
  const int64_t nb = num_superblocks(n);
  for (int64_t i = 0; i < nb; ++i) {
    for (int j = 0; j < kQK_K; ++j) *y++ = x[i].d * x[i].qs[j];
  }
}

}  // namespace sf::quant
