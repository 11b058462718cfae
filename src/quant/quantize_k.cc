// K-quant encoders (Q2_K..Q6_K) and the Q8_K activation format, following llama.cpp's
// reference (non-imatrix) quantisers: per sub-block scale/min searches (the make_*_quants
// family), then the sub-block scales themselves quantised against one fp16 super-block scale,
// then every element re-quantised with the scale it will actually be decoded with.
//
// Every float operation keeps llama.cpp's order and contraction is off, because the point is
// byte-identical output (tests/quant compares against files written by llama-quantize).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/quant_internal.h"

namespace sf::quant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // below this a group is treated as all zero

int64_t num_superblocks(int64_t n) {
  SF_CHECK(n % kQK_K == 0, "%lld elements is not a multiple of 256", static_cast<long long>(n));
  return n / kQK_K;
}

// Symmetric scale search with weights x^2 (llama.cpp make_qx_quants, rmse_type 1, no
// importance): start from the max-magnitude mapping, then try 18 nearby scales and keep the
// one with the best weighted least-squares fit. L receives q + nmax in [0, 2*nmax).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t{0});
    return 0.f;
  }
  auto clamp_l = [nmax](int l) { return std::max(-nmax, std::min(nmax - 1, l)); };
  float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_l(nearest_int(iscale * x[i]));
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_l(nearest_int(iscale * x[i]));
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        L[i] = static_cast<int8_t>(nmax + clamp_l(nearest_int(iscale * x[i])));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Symmetric 3-bit search (make_q3_quants with rmse): coordinate descent on single levels
// while it improves the weighted fit. L receives q + nmax.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t{0});
    return 0.f;
  }
  auto clamp_l = [nmax](int l) { return std::max(-nmax, std::min(nmax - 1, l)); };
  const float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_l(nearest_int(iscale * x[i]));
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx > 0) {
        float sl2 = suml2 - w * L[i] * L[i];
        const int new_l = clamp_l(nearest_int(x[i] * sl2 / slx));
        if (new_l != L[i]) {
          slx += w * x[i] * new_l;
          sl2 += w * new_l * new_l;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric search (make_qkx2_quants): x ~ scale * L + min with min <= 0; tries nstep + 1
// scales around nmax / (max - min) and solves the weighted least squares for (scale, min)
// at each. Returns scale, stores -min in *the_min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, uint8_t* Laux,
                       float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t{0});
    *the_min = -min;
    return 0.f;
  }
  auto clamp_l = [nmax](int l) { return std::max(0, std::min(nmax, l)); };
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(clamp_l(nearest_int(iscale * (x[i] - min))));
    float diff = scale * L[i] + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_l(nearest_int(iscale * (x[i] - min)));
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Q2_K/Q3_K/Q6_K store four 32-element groups of 2-bit fields in one 32-byte run: element
// j + l + 32 * k of a 128-element half goes to bits 2k of byte j / 4 + l.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] =
          static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
  }
}

// Q4_K/Q5_K: 8 scales and 8 mins in 6 bits each (layout in unpack_scale_min_k4).
void pack_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* s) {
  if (j < 4) {
    s[j] = ls;
    s[j + 4] = lm;
  } else {
    s[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
    s[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
    s[j] |= static_cast<uint8_t>((lm >> 4) << 6);
  }
}

// Shared by Q4_K and Q5_K: per 32-element sub-block asymmetric search, 6-bit scales and mins
// against fp16 d/dmin, then re-quantisation into L (0..nmax).
void quantize_superblock_k4(const float* x, int nmax, float rmin, int nstep, uint16_t* d, uint16_t* dmin,
                            uint8_t* scales12, uint8_t* L) {
  uint8_t Laux[32];
  float weights[32];
  float mins[8];
  float scales[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < 8; ++j) {
    uint8_t ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    uint8_t lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    ls = std::min<uint8_t>(63, ls);
    lm = std::min<uint8_t>(63, lm);
    pack_scale_min_k4(j, ls, lm, scales12);
  }
  *d = fp32_to_fp16(max_scale / 63.f);
  *dmin = fp32_to_fp16(max_min / 63.f);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    unpack_scale_min_k4(j, scales12, &sc, &m);
    const float dl = fp16_to_fp32(*d) * sc;
    if (dl == 0.0f) continue;
    const float dm = fp16_to_fp32(*dmin) * m;
    for (int ii = 0; ii < 32; ++ii) {
      const int l = nearest_int((x[32 * j + ii] + dm) / dl);
      L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    }
  }
}

}  // namespace

void quantize_row_q2_k(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ2_K*>(dst);
  const int64_t nb = num_superblocks(n);
  uint8_t L[kQK_K];
  uint8_t Laux[16];
  float weights[16];
  float mins[16];
  float scales[16];
  const float q4scale = 15.f;
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      for (int j = 0; j < 16; ++j) y[i].scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      y[i].d = fp32_to_fp16(max_scale / q4scale);
    } else {
      std::memset(y[i].scales, 0, sizeof(y[i].scales));
      y[i].d = fp32_to_fp16(0.f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < 16; ++j) {
        y[i].scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mins[j]) << 4);
      }
      y[i].dmin = fp32_to_fp16(max_min / q4scale);
    } else {
      y[i].dmin = fp32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * (y[i].scales[j] & 0xF);
      if (d == 0.0f) continue;
      const float dm = fp16_to_fp32(y[i].dmin) * (y[i].scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii) {
        const int l = nearest_int((x[16 * j + ii] + dm) / d);
        L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
      }
    }
    pack_2bit(L, y[i].qs);
  }
}

void quantize_row_q3_k(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ3_K*>(dst);
  const int64_t nb = num_superblocks(n);
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
      const float scale = std::fabs(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }
    std::memset(y[i].scales, 0, sizeof(y[i].scales));
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < 16; ++j) {
        int l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
        l = std::max(-32, std::min(31, l)) + 32;
        if (j < 8) {
          y[i].scales[j] = static_cast<uint8_t>(l & 0xF);
        } else {
          y[i].scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
        }
        y[i].scales[j % 4 + 8] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
      }
      y[i].d = fp32_to_fp16(1 / iscale);
    } else {
      y[i].d = fp32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * unpack_scale_q3_k(j, y[i].scales);
      if (d == 0.0f) continue;
      for (int ii = 0; ii < 16; ++ii) {
        const int l = nearest_int(x[16 * j + ii] / d);
        L[16 * j + ii] = static_cast<int8_t>(std::max(-4, std::min(3, l)) + 4);
      }
    }
    // The third bit of element j goes to hmask[j % 32] bit j / 32.
    std::memset(y[i].hmask, 0, sizeof(y[i].hmask));
    uint8_t L2[kQK_K];
    for (int j = 0; j < kQK_K; ++j) {
      int l = L[j];
      if (l > 3) {
        y[i].hmask[j % 32] |= static_cast<uint8_t>(1 << (j / 32));
        l -= 4;
      }
      L2[j] = static_cast<uint8_t>(l);
    }
    pack_2bit(L2, y[i].qs);
  }
}

void quantize_row_q4_k(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_K*>(dst);
  const int64_t nb = num_superblocks(n);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    quantize_superblock_k4(x, 15, -1.f, 20, &y[i].d, &y[i].dmin, y[i].scales, L);
    // Each 32-byte run holds two sub-blocks: the first in low nibbles, the next in high.
    uint8_t* q = y[i].qs;
    for (int j = 0; j < kQK_K; j += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

void quantize_row_q5_k(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_K*>(dst);
  const int64_t nb = num_superblocks(n);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    quantize_superblock_k4(x, 31, -0.5f, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
    // Low nibbles as Q4_K; the fifth bit of sub-block s goes to bit s of qh[element % 32].
    std::memset(y[i].qh, 0, sizeof(y[i].qh));
    uint8_t* ql = y[i].qs;
    uint8_t m1 = 1, m2 = 2;
    for (int j = 0; j < kQK_K; j += 64, ql += 32) {
      for (int l = 0; l < 32; ++l) {
        int l1 = L[j + l];
        if (l1 > 15) {
          l1 -= 16;
          y[i].qh[l] |= m1;
        }
        int l2 = L[j + l + 32];
        if (l2 > 15) {
          l2 -= 16;
          y[i].qh[l] |= m2;
        }
        ql[l] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
      m1 = static_cast<uint8_t>(m1 << 2);
      m2 = static_cast<uint8_t>(m2 << 2);
    }
  }
}

void quantize_row_q6_k(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ6_K*>(dst);
  const int64_t nb = num_superblocks(n);
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
      scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
      const float abs_scale = std::fabs(scales[ib]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&y[i], 0, sizeof(y[i]));
      continue;
    }
    const float iscale = -128.f / max_scale;
    y[i].d = fp32_to_fp16(1 / iscale);
    for (int ib = 0; ib < 16; ++ib) {
      y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * y[i].scales[j];
      if (d == 0.0f) continue;
      for (int ii = 0; ii < 16; ++ii) {
        const int l = nearest_int(x[16 * j + ii] / d);
        L[16 * j + ii] = static_cast<int8_t>(std::max(-32, std::min(31, l)) + 32);
      }
    }
    // Per 128-element half: low nibbles of groups 0/2 and 1/3 share ql bytes, the two high
    // bits of all four groups share one qh byte.
    uint8_t* ql = y[i].ql;
    uint8_t* qh = y[i].qh;
    for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
        ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

// Q8_K: the largest-magnitude element maps to -127 exactly (sign kept through max), so the
// dot kernels can rely on |q| <= 127. Ties round to even (nearest_int).
void quantize_row_q8_k(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_K*>(dst);
  const int64_t nb = num_superblocks(n);
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max = 0, amax = 0;
    for (int j = 0; j < kQK_K; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    if (amax == 0.0f) {
      std::memset(&y[i], 0, sizeof(y[i]));
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) {
      y[i].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
    }
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
      y[i].bsums[j] = static_cast<int16_t>(sum);
    }
    y[i].d = 1 / iscale;
  }
}

}  // namespace sf::quant
