// The AVX512-VNNI kernel for Q6_K weights in row panels (quant/row_panels.h), used by
// dot_panel.cc in its AVX3_DL pass, for every batch size: one WEIGHT row per lane, as the
// Q4_0 and Q4_K kernels (vnni_row_panels-inl.h, vnni_row_panels_k-inl.h). Q6_K is the
// other half of a Q4_K_M file: its attn_v, half its ffn_down and its LM head.
//
// Per half h and quarter j of a super-block, eight loads of the interleaved low-nibble
// bytes and eight of the high-bit bytes give every lane (row) the 32 six-bit levels
// q' = q + 32 of two 16-element sub-blocks, four bytes per vector, as vnni_k16-inl.h's
// UnpackHalf makes them; four vpdpbusd per sub-block against broadcast activation words,
// started at the prepared -32 * bsum_s, give each lane sub-block s's exact
// sum q x = sum q' x - 32 bsum_s, which the lane's own signed scale weights with one multiply.
// That is the exact integer A_i of vnni_k16-inl.h's per-element definition (summed in
// another order, still exact), and one chain over the super-blocks, a = fma(float(A_i),
// fl(d_i * d_x,i), a), so the result equals the row-major kernels' float for float.
#if defined(SF_QUANT_VNNI_ROW_PANELS_K6_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_ROW_PANELS_K6_INL_H_
#undef SF_QUANT_VNNI_ROW_PANELS_K6_INL_H_
#else
#define SF_QUANT_VNNI_ROW_PANELS_K6_INL_H_
#endif

#include "hwy/highway.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // used only in the AVX3_DL pass below
#endif

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

// Panel super-blocks (3,360 bytes each) fetched ahead of the one in use.
inline constexpr int64_t kK6PanelPrefetchBlocks = 1;
// Activation rows sharing one unpacking of a quarter's levels (8 registers).
inline constexpr int kK6ActRowsPerPass = 4;

// A Q8_K activation block as the kernel reads it: the quants, each sub-block's start value
// -32 * bsum_s (the offset of q', taken out exactly) and d, prepared once per matmul; 384
// bytes, six cache lines.
struct VnniK6ActBlock {
  int8_t qs[256];
  int32_t start[16];
  float d;
  int32_t pad[15];
};
static_assert(sizeof(VnniK6ActBlock) == 384, "whole cache lines");

inline size_t VnniK6ActPreparedBytes(int64_t n_act, int64_t n) {
  return static_cast<size_t>(n_act * (n / kQK_K)) * sizeof(VnniK6ActBlock);
}

inline void VnniK6ActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  const int64_t nb = n / kQK_K;
  auto* out = static_cast<VnniK6ActBlock*>(prepared);
  for (int64_t c = 0; c < n_act; ++c) {
    const auto* x = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(act) + c * act_stride);
    for (int64_t b = 0; b < nb; ++b) {
      VnniK6ActBlock& xb = out[c * nb + b];
      std::memset(&xb, 0, sizeof(xb));
      std::memcpy(xb.qs, x[b].qs, sizeof(xb.qs));
      for (int s = 0; s < 16; ++s) xb.start[s] = -32 * static_cast<int32_t>(x[b].bsums[s]);
      xb.d = x[b].d;
    }
  }
}

// Lane j's signed scale s (0..15), sign-extended, from the per-lane scale words.
HWY_INLINE __m512i LaneScale(const __m512i* words, int s) {
  return _mm512_srai_epi32(_mm512_slli_epi32(words[s / 4], 24 - 8 * (s % 4)), 24);
}

// Super-block i of one panel x A activation rows into the chains a[].
template <int A>
HWY_INLINE void K6PanelBlock(const Q6_KPanelBlock& wb, const VnniK6ActBlock* const* x, int64_t i, __m512* a) {
  __m512i scale_words[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) scale_words[k] = _mm512_loadu_si512(wb.scales[k]);
  const __m512i low4 = _mm512_set1_epi8(0x0F), high2 = _mm512_set1_epi8(0x30);
  __m512i big[A];
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r) big[r] = _mm512_setzero_si512();
#pragma GCC unroll 1
  for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      // Element 128h + 32j + 4m + t of every row: group m of the quarter's levels; its low
      // four bits are the low (j < 2) or high nibble of ql[64h + 32(j % 2) + 4m + t], bits
      // 4-5 are bits 2j, 2j + 1 of qh[32h + 4m + t] (16-bit shifts; the masks drop what
      // crossed bytes).
      __m512i q[8];
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) {
        const __m512i ql = _mm512_loadu_si512(wb.ql[16 * h + 8 * (j % 2) + m]);
        const __m512i qh = _mm512_loadu_si512(wb.qh[8 * h + m]);
        const __m512i nibble = j < 2 ? _mm512_and_si512(ql, low4) : _mm512_and_si512(_mm512_srli_epi16(ql, 4), low4);
        __m512i top;
        if (j == 0) {
          top = _mm512_slli_epi16(qh, 4);
        } else if (j == 1) {
          top = _mm512_slli_epi16(qh, 2);
        } else if (j == 2) {
          top = qh;
        } else {
          top = _mm512_srli_epi16(qh, 2);
        }
        q[m] = _mm512_or_si512(nibble, _mm512_and_si512(top, high2));
      }
      const int s_lo = 8 * h + 2 * j, s_hi = s_lo + 1;  // elements 4m.. of m < 4, m >= 4
      const __m512i scale_lo = LaneScale(scale_words, s_lo);
      const __m512i scale_hi = LaneScale(scale_words, s_hi);
#pragma GCC unroll 4
      for (int r = 0; r < A; ++r) {
        const VnniK6ActBlock& xb = x[r][i];
        int32_t words[8];
        std::memcpy(words, xb.qs + 128 * h + 32 * j, sizeof(words));
        __m512i dot_lo = _mm512_set1_epi32(xb.start[s_lo]), dot_hi = _mm512_set1_epi32(xb.start[s_hi]);
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {
          dot_lo = _mm512_dpbusd_epi32(dot_lo, q[m], _mm512_set1_epi32(words[m]));
          dot_hi = _mm512_dpbusd_epi32(dot_hi, q[m + 4], _mm512_set1_epi32(words[m + 4]));
        }
        big[r] = _mm512_add_epi32(
            big[r], _mm512_add_epi32(_mm512_mullo_epi32(dot_lo, scale_lo), _mm512_mullo_epi32(dot_hi, scale_hi)));
      }
    }
  }
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.d)));
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r)
    a[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big[r]), _mm512_mul_ps(d, _mm512_set1_ps(x[r][i].d)), a[r]);
}

// One panel x A activation rows: lanes[a] lane j = weight row j with activation row a.
template <int A>
HWY_INLINE void K6PanelRowsT(const Q6_KPanelBlock* panel, const VnniK6ActBlock* const* xs, int64_t nb, __m512* lanes) {
  __m512 a[A];
  for (int k = 0; k < A; ++k) a[k] = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    PrefetchBlockAhead<kK6PanelPrefetchBlocks>(panel + i);
    K6PanelBlock<A>(panel[i], xs, i, a);
  }
  for (int k = 0; k < A; ++k) lanes[k] = a[k];
}

// The Q6_K tile on prepared activations (VnniK6ActPrepare): out[c * out_stride + r] for r <
// n_rows (a multiple of 16, weight at a panel's first byte), c < n_act.
inline void VnniK6PanelRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared,
                           size_t /*act_stride*/, int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  RunPanels<Q6_KPanelBlock, VnniK6ActBlock, kK6ActRowsPerPass>(
      weight, row_stride, n_rows, prepared, n_act, n / kQK_K, out, out_stride,
      [](auto act_rows, const Q6_KPanelBlock* panel, const VnniK6ActBlock* const* xs, int64_t nb, __m512* lanes)
          HWY_ATTR { K6PanelRowsT<decltype(act_rows)::value>(panel, xs, nb, lanes); });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_ROW_PANELS_K6_INL_H_ toggle
