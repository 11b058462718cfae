// The AVX512-VNNI kernels for the K-quants with 16-element sub-blocks, Q6_K, Q3_K and Q2_K,
// in row panels (quant/row_panels.h), used by dot_panel.cc in its AVX3_DL pass, for every
// batch size: one WEIGHT row per lane, as the Q4_0 and Q4_K kernels (vnni_row_panels-inl.h,
// vnni_row_panels_k-inl.h). Q6_K is the other half of a Q4_K_M file (its LM head and part of
// attn_v and ffn_down); Q3_K and Q2_K are what fit the largest models into the smallest
// memory.
//
// Per half h and quarter of a super-block, eight loads give every lane (row) the 32 levels
// of two 16-element sub-blocks, four bytes per vector, built as vnni_k16-inl.h builds them:
// Q6_K's six-bit q' = q + 32 from the interleaved low-nibble and high-bit bytes (its
// UnpackHalf), Q3_K's q' = q + 4 from two bits and the hmask bit, Q2_K's two-bit levels
// (TwoBitLevels). Four vpdpbusd per sub-block against broadcast activation words give each
// lane the sub-block's exact dot (Q6_K's started at -32 bsum_s, Q3_K's at -4 bsum_s, with
// Q8_K's group sum: the offset taken out), which the lane's own scale weights with one
// multiply; Q2_K's min nibbles times the group sums give B_i. Those are vnni_k16-inl.h's
// exact integers A_i and B_i (summed in another order, still exact) and its chains a and b,
// so the result a - b (b = +0 for Q6_K and Q3_K) equals the row-major kernels' float for
// float.
#if defined(SF_QUANT_VNNI_ROW_PANELS_K16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_ROW_PANELS_K16_INL_H_
#undef SF_QUANT_VNNI_ROW_PANELS_K16_INL_H_
#else
#define SF_QUANT_VNNI_ROW_PANELS_K16_INL_H_
#endif

#include "hwy/highway.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // used only in the AVX3_DL pass below
#endif

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "hwy/cache_control.h"
#include "quant/block_types.h"
#include "quant/row_panel_blocks.h"
#include "quant/vnni_row_panels-inl.h"  // RunPanels

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // see vnni_q-inl.h
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, see vnni_q-inl.h
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL

// Panel super-blocks fetched ahead of the one in use: about 2.7 KB (Q2_K's 1,344-byte blocks
// two ahead, Q3_K's 1,760-byte and Q6_K's 3,360-byte ones one).
template <class PanelBlock>
inline constexpr int64_t kK16PanelPrefetchBlocks = std::max<int64_t>(1, 2700 / sizeof(PanelBlock));
// Activation rows sharing one unpacking of a quarter's levels (8 registers).
inline constexpr int kK16ActRowsPerPass = 4;

// A Q8_K activation block as the kernels read it: the quants, the 16 group sums and d,
// prepared once per matmul; 384 bytes, six cache lines.
struct VnniK16ActBlock {
  int8_t qs[256];
  int32_t bsums[16];
  float d;
  int32_t pad[15];
};
static_assert(sizeof(VnniK16ActBlock) == 384, "whole cache lines");

inline size_t VnniK16ActPreparedBytes(int64_t n_act, int64_t n) {
  return static_cast<size_t>(n_act * (n / kQK_K)) * sizeof(VnniK16ActBlock);
}

inline void VnniK16ActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  const int64_t nb = n / kQK_K;
  auto* out = static_cast<VnniK16ActBlock*>(prepared);
  for (int64_t c = 0; c < n_act; ++c) {
    const auto* x = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(act) + c * act_stride);
    for (int64_t b = 0; b < nb; ++b) {
      VnniK16ActBlock& xb = out[c * nb + b];
      std::memset(&xb, 0, sizeof(xb));
      std::memcpy(xb.qs, x[b].qs, sizeof(xb.qs));
      for (int s = 0; s < 16; ++s) xb.bsums[s] = x[b].bsums[s];
      xb.d = x[b].d;
    }
  }
}

// Lane j's signed scale s (0..15), sign-extended, from the per-lane scale words.
HWY_INLINE __m512i LaneScale(const __m512i* words, int s) {
  return _mm512_srai_epi32(_mm512_slli_epi32(words[s / 4], 24 - 8 * (s % 4)), 24);
}

// Lane j's four-bit field of sub-block s (0..15) from the per-lane scale words: the scale
// (shift 0) or the min (shift 4).
HWY_INLINE __m512i LaneNibble(const __m512i* words, int s, int shift) {
  return _mm512_and_si512(_mm512_srli_epi32(words[s / 4], 8 * (s % 4) + shift), _mm512_set1_epi32(0x0F));
}

// The levels q[0..7] of sub-blocks s_lo (q[0..3]) and s_lo + 1 (q[4..7]), elements e0.. of
// super-block i, against each activation row: the two sub-blocks' exact dots, started at
// kStartFactor * bsum_s (the levels' offset, taken out), weighted by each lane's scale and
// added into big[r] (integer adds: exact in any order).
template <int A, int kStartFactor>
HWY_INLINE void AddScaledSubBlockPair(const __m512i* q, const VnniK16ActBlock* const* x, int64_t i, int e0, int s_lo,
                                      __m512i scale_lo, __m512i scale_hi, __m512i* big) {
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r) {
    const VnniK16ActBlock& xb = x[r][i];
    const int8_t* xq = xb.qs + e0;
    __m512i dot_lo = _mm512_set1_epi32(kStartFactor * xb.bsums[s_lo]);
    __m512i dot_hi = _mm512_set1_epi32(kStartFactor * xb.bsums[s_lo + 1]);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      dot_lo = _mm512_dpbusd_epi32(dot_lo, q[m], BroadcastActWord(xq + 4 * m));
      dot_hi = _mm512_dpbusd_epi32(dot_hi, q[m + 4], BroadcastActWord(xq + 4 * (m + 4)));
    }
    big[r] = _mm512_add_epi32(
        big[r], _mm512_add_epi32(_mm512_mullo_epi32(dot_lo, scale_lo), _mm512_mullo_epi32(dot_hi, scale_hi)));
  }
}

// The eight quarters of super-block i (half h, quarter j: sub-blocks 8h + 2j and 8h + 2j +
// 1, elements 128h + 32j ..) into big[]: levels(h, j, m) gives the quarter's level group m
// as AddScaledSubBlockPair takes it, scale(s) each lane's scale of sub-block s.
template <int A, int kStartFactor, class Levels, class Scale>
HWY_INLINE void AddQuarters(const Levels& levels, const Scale& scale, const VnniK16ActBlock* const* x, int64_t i,
                            __m512i* big) {
#pragma GCC unroll 1
  for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m512i q[8];
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) q[m] = levels(h, j, m);
      const int s_lo = 8 * h + 2 * j;  // elements 4m.. of m < 4; s_lo + 1: of m >= 4
      AddScaledSubBlockPair<A, kStartFactor>(q, x, i, 128 * h + 32 * j, s_lo, scale(s_lo), scale(s_lo + 1), big);
    }
  }
}

// The formats without mins: super-block i's exact integers big[] into the chains, a[r] =
// fma(float(A_i), d_w * d_x, a[r]).
template <int A>
HWY_INLINE void ChainSuperBlock(const __m512i* big, const uint16_t* d16, const VnniK16ActBlock* const* x, int64_t i,
                                __m512* a) {
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d16)));
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r)
    a[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big[r]), _mm512_mul_ps(d, _mm512_set1_ps(x[r][i].d)), a[r]);
}

// Q6_K: super-block i of one panel x A activation rows into the chains a[] (no mins: b[]
// stays +0).
template <int A>
HWY_INLINE void K16PanelBlock(const Q6_KPanelBlock& wb, const VnniK16ActBlock* const* x, int64_t i, __m512* a,
                              __m512* /*b*/) {
  __m512i scale_words[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) scale_words[k] = _mm512_loadu_si512(wb.scales[k]);
  const __m512i low4 = _mm512_set1_epi8(0x0F), high2 = _mm512_set1_epi8(0x30);
  __m512i big[A];
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r) big[r] = _mm512_setzero_si512();
  // Element 128h + 32j + 4m + t of every row: group m of the quarter's levels; its low four
  // bits are the low (j < 2) or high nibble of ql[64h + 32(j % 2) + 4m + t], bits 4-5 are
  // bits 2j, 2j + 1 of qh[32h + 4m + t] (16-bit shifts; the masks drop what crossed bytes).
  const auto levels = [&](int h, int j, int m) HWY_ATTR {
    const __m512i ql = _mm512_loadu_si512(wb.ql[16 * h + 8 * (j % 2) + m]);
    const __m512i qh = _mm512_loadu_si512(wb.qh[8 * h + m]);
    const __m512i nibble = j < 2 ? _mm512_and_si512(ql, low4) : _mm512_and_si512(_mm512_srli_epi16(ql, 4), low4);
    const __m512i top = j == 0   ? _mm512_slli_epi16(qh, 4)
                        : j == 1 ? _mm512_slli_epi16(qh, 2)
                        : j == 2 ? qh
                                 : _mm512_srli_epi16(qh, 2);
    return _mm512_or_si512(nibble, _mm512_and_si512(top, high2));
  };
  // Started at -32 bsum_s: the offset of q', taken out exactly.
  AddQuarters<A, -32>(
      levels, [&](int s) HWY_ATTR { return LaneScale(scale_words, s); }, x, i, big);
  ChainSuperBlock<A>(big, wb.d, x, i, a);
}

// Q3_K: super-block i of one panel x A activation rows into the chains a[] (no mins: b[]
// stays +0).
template <int A>
HWY_INLINE void K16PanelBlock(const Q3_KPanelBlock& wb, const VnniK16ActBlock* const* x, int64_t i, __m512* a,
                              __m512* /*b*/) {
  // Each lane's 16 six-bit scales from its 12 packed bytes (unpack_scales_q3_k_words, lane
  // by lane), minus 32 as signed bytes: scale_words[k] byte t is sub-block 4k + t's.
  const __m512i p0 = _mm512_loadu_si512(wb.scales[0]), p1 = _mm512_loadu_si512(wb.scales[1]);
  const __m512i p2 = _mm512_loadu_si512(wb.scales[2]);
  const __m512i low4 = _mm512_set1_epi8(0x0F), low2 = _mm512_set1_epi8(0x03), k32 = _mm512_set1_epi8(32);
  const auto top = [&](int shift) HWY_ATTR {  // bits shift, shift + 1 of p2's bytes, moved to bits 4-5
    return _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(p2, shift), low2), 4);
  };
  const __m512i scale_words[4] = {
      _mm512_sub_epi8(_mm512_or_si512(_mm512_and_si512(p0, low4), top(0)), k32),
      _mm512_sub_epi8(_mm512_or_si512(_mm512_and_si512(p1, low4), top(2)), k32),
      _mm512_sub_epi8(_mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(p0, 4), low4), top(4)), k32),
      _mm512_sub_epi8(_mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(p1, 4), low4), top(6)), k32),
  };
  const __m512i three = _mm512_set1_epi8(0x03), four = _mm512_set1_epi8(0x04);
  __m512i big[A];
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r) big[r] = _mm512_setzero_si512();
  // Element 128h + 32k + 4m + t of every row: bits 2k, 2k + 1 of qs[32h + 4m + t], plus 4
  // where bit 4h + k of hmask[4m + t] is set (16-bit shifts; the masks drop what crossed
  // bytes).
  const auto levels = [&](int h, int k, int m) HWY_ATTR {
    const int bit = 4 * h + k;
    const __m512i low = _mm512_and_si512(_mm512_srli_epi16(_mm512_loadu_si512(wb.qs[8 * h + m]), 2 * k), three);
    const __m512i hm = _mm512_loadu_si512(wb.hmask[m]);
    const __m512i high = bit >= 2 ? _mm512_srli_epi16(hm, bit - 2) : _mm512_slli_epi16(hm, 2 - bit);
    return _mm512_or_si512(low, _mm512_and_si512(high, four));
  };
  // Started at -4 bsum_s: the offset of q', taken out exactly.
  AddQuarters<A, -4>(
      levels, [&](int s) HWY_ATTR { return LaneScale(scale_words, s); }, x, i, big);
  ChainSuperBlock<A>(big, wb.d, x, i, a);
}

// Q2_K: super-block i of one panel x A activation rows into the chains a[] and b[].
template <int A>
HWY_INLINE void K16PanelBlock(const Q2_KPanelBlock& wb, const VnniK16ActBlock* const* x, int64_t i, __m512* a,
                              __m512* b) {
  __m512i scale_words[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) scale_words[k] = _mm512_loadu_si512(wb.scales[k]);
  __m512i big_a[A], big_b[A];
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r) big_a[r] = big_b[r] = _mm512_setzero_si512();
    // B_i: mins x the activation's group sums.
#pragma GCC unroll 16
  for (int s = 0; s < 16; ++s) {
    const __m512i m = LaneNibble(scale_words, s, 4);
#pragma GCC unroll 4
    for (int r = 0; r < A; ++r)
      big_b[r] = _mm512_add_epi32(big_b[r], _mm512_mullo_epi32(m, _mm512_set1_epi32(x[r][i].bsums[s])));
  }
  const __m512i three = _mm512_set1_epi8(0x03);
  // Element 128h + 32k + 4m + t of every row: bits 2k, 2k + 1 of qs[32h + 4m + t] (a 16-bit
  // shift; the mask drops what crossed bytes).
  AddQuarters<A, 0>(
      [&](int h, int k, int m)
          HWY_ATTR { return _mm512_and_si512(_mm512_srli_epi16(_mm512_loadu_si512(wb.qs[8 * h + m]), 2 * k), three); },
      [&](int s) HWY_ATTR { return LaneNibble(scale_words, s, 0); }, x, i, big_a);
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.d)));
  const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.dmin)));
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r) {
    const __m512 dx = _mm512_set1_ps(x[r][i].d);
    a[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big_a[r]), _mm512_mul_ps(d, dx), a[r]);
    b[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big_b[r]), _mm512_mul_ps(dmin, dx), b[r]);
  }
}

// One panel x A activation rows: lanes[a] lane j = weight row j with activation row a.
template <int A, class PanelBlock>
HWY_INLINE void K16PanelRowsT(const PanelBlock* panel, const VnniK16ActBlock* const* xs, int64_t nb, __m512* lanes) {
  __m512 a[A], b[A];
  for (int k = 0; k < A; ++k) a[k] = b[k] = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    PrefetchBlockAhead<kK16PanelPrefetchBlocks<PanelBlock>>(panel + i);
    K16PanelBlock<A>(panel[i], xs, i, a, b);
  }
  for (int k = 0; k < A; ++k) lanes[k] = _mm512_sub_ps(a[k], b[k]);
}

// A format's tile on prepared activations (VnniK16ActPrepare): out[c * out_stride + r] for
// r < n_rows (a multiple of 16, weight at a panel's first byte), c < n_act.
template <class PanelBlock>
inline void VnniK16PanelRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared,
                            size_t /*act_stride*/, int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  RunPanels<PanelBlock, VnniK16ActBlock, kK16ActRowsPerPass>(
      weight, row_stride, n_rows, prepared, n_act, n / kQK_K, out, out_stride,
      [](auto act_rows, const PanelBlock* panel, const VnniK16ActBlock* const* xs, int64_t nb, __m512* lanes)
          HWY_ATTR { K16PanelRowsT<decltype(act_rows)::value>(panel, xs, nb, lanes); });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_ROW_PANELS_K16_INL_H_ toggle
