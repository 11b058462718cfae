// The AVX512-VNNI kernel for Q4_K (and Q5_K) weights in row panels (quant/row_panels.h), used by
// dot_panel.cc in its AVX3_DL pass, for every batch size: one WEIGHT row per lane, as the
// Q4_0 kernel of vnni_row_panels-inl.h.
//
// Per super-block, each lane (row) gets its eight six-bit scales and mins from three loads
// of the interleaved packed bytes and a few shifts and masks; each of the 32 quant groups is
// one load giving every lane four bytes, i.e. the low nibbles for sub-block 2g and the high
// ones for 2g + 1; sixteen vpdpbusd against broadcast activation words give a sub-block
// pair's exact dots, which the scales weight with one multiply each. The result follows
// vnni_k-inl.h's per-element definition (the exact integers A_i and B_i, two chains a and b
// over the super-blocks, a - b), so it equals the row-major kernels' float for float.
#if defined(SF_QUANT_VNNI_ROW_PANELS_K_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_ROW_PANELS_K_INL_H_
#undef SF_QUANT_VNNI_ROW_PANELS_K_INL_H_
#else
#define SF_QUANT_VNNI_ROW_PANELS_K_INL_H_
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

// Panel super-blocks (2,304 bytes each) fetched ahead of the one in use: 2 gave one thread
// ~37 GB/s from DRAM where 1 gave ~30 (row-major Q4_K: ~26).
inline constexpr int64_t kK4PanelPrefetchBlocks = 2;
// Activation rows sharing one unpacking of a sub-block pair's weights (16 registers); 8
// spills and is slower from 16 rows on.
inline constexpr int kK4ActRowsPerPass = 4;

// A Q8_K activation block as the kernel reads it: the quants, the eight sub-block sums (for
// B_i) and d, prepared once per matmul; 320 bytes, five cache lines.
struct VnniK4ActBlock {
  int8_t qs[256];
  int32_t sums[8];
  float d;
  int32_t pad[7];
};
static_assert(sizeof(VnniK4ActBlock) == 320, "whole cache lines");

inline size_t VnniK4ActPreparedBytes(int64_t n_act, int64_t n) {
  return static_cast<size_t>(n_act * (n / kQK_K)) * sizeof(VnniK4ActBlock);
}

inline void VnniK4ActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  const int64_t nb = n / kQK_K;
  auto* out = static_cast<VnniK4ActBlock*>(prepared);
  for (int64_t c = 0; c < n_act; ++c) {
    const auto* x = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(act) + c * act_stride);
    for (int64_t b = 0; b < nb; ++b) {
      VnniK4ActBlock& xb = out[c * nb + b];
      std::memset(&xb, 0, sizeof(xb));
      std::memcpy(xb.qs, x[b].qs, sizeof(xb.qs));
      for (int s = 0; s < 8; ++s) xb.sums[s] = x[b].bsums[2 * s] + x[b].bsums[2 * s + 1];
      xb.d = x[b].d;
    }
  }
}

// Lane j's scale (or min) s, 0..7, from the per-lane words of scales 0-3 and 4-7.
HWY_INLINE __m512i LaneByte(__m512i low4, __m512i high4, int s) {
  const __m512i word = s < 4 ? low4 : high4;
  return _mm512_and_si512(_mm512_srli_epi32(word, 8 * (s & 3)), _mm512_set1_epi32(0xFF));
}

// Super-block i of one panel x A activation rows into the chains a[] and b[]. PanelBlock:
// Q4_K's, or Q5_K's, whose levels take bit 2g (low nibbles) or 2g + 1 (high ones) of the
// row's qh byte as bit 4 (vnni_k-inl.h).
template <int A, class PanelBlock>
HWY_INLINE void K4PanelBlock(const PanelBlock& wb, const VnniK4ActBlock* const* x, int64_t i, __m512* a, __m512* b) {
  constexpr bool kFiveBit = std::is_same_v<PanelBlock, Q5_KPanelBlock>;
  // unpack_scale_min_k4 on every lane at once (see K4ScaleMin in vnni_k-inl.h).
  const __m512i w0 = _mm512_loadu_si512(wb.scales[0]);
  const __m512i w1 = _mm512_loadu_si512(wb.scales[1]);
  const __m512i w2 = _mm512_loadu_si512(wb.scales[2]);
  const __m512i low6 = _mm512_set1_epi8(0x3F), low4 = _mm512_set1_epi8(0x0F), top2 = _mm512_set1_epi8(0x30);
  const __m512i scales03 = _mm512_and_si512(w0, low6);
  const __m512i mins03 = _mm512_and_si512(w1, low6);
  const __m512i scales47 =
      _mm512_or_si512(_mm512_and_si512(w2, low4), _mm512_and_si512(_mm512_srli_epi32(w0, 2), top2));
  const __m512i mins47 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(w2, 4), low4),
                                         _mm512_and_si512(_mm512_srli_epi32(w1, 2), top2));
  __m512i big_a[A], big_b[A];
#pragma GCC unroll 4
  for (int r = 0; r < A; ++r) {
    big_a[r] = _mm512_setzero_si512();
    big_b[r] = _mm512_setzero_si512();
  }
  // B_i: mins x the activation's sub-block sums.
#pragma GCC unroll 8
  for (int s = 0; s < 8; ++s) {
    const __m512i m = LaneByte(mins03, mins47, s);
#pragma GCC unroll 4
    for (int r = 0; r < A; ++r)
      big_b[r] = _mm512_add_epi32(big_b[r], _mm512_mullo_epi32(m, _mm512_set1_epi32(x[r][i].sums[s])));
  }
  // A_i: sub-block pair g at a time.
#pragma GCC unroll 1
  for (int g = 0; g < 4; ++g) {
    __m512i lo[8], hi[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const __m512i q = _mm512_loadu_si512(wb.qs[8 * g + k]);
      lo[k] = _mm512_and_si512(q, low4);
      hi[k] = _mm512_and_si512(_mm512_srli_epi16(q, 4), low4);
      if constexpr (kFiveBit) {
        // Bytes 4k..4k+3 of the row's qh: bits 2g and 2g + 1 to bit 4 (16-bit shifts of
        // bytes masked to one bit stay inside their byte).
        const __m512i qh = _mm512_loadu_si512(wb.qh[k]);
        const __m512i one = _mm512_set1_epi8(1);
        const __m512i bit_lo = _mm512_and_si512(_mm512_srl_epi16(qh, _mm_cvtsi32_si128(2 * g)), one);
        const __m512i bit_hi = _mm512_and_si512(_mm512_srl_epi16(qh, _mm_cvtsi32_si128(2 * g + 1)), one);
        lo[k] = _mm512_or_si512(lo[k], _mm512_slli_epi16(bit_lo, 4));
        hi[k] = _mm512_or_si512(hi[k], _mm512_slli_epi16(bit_hi, 4));
      }
    }
    const __m512i scale_lo = LaneByte(scales03, scales47, 2 * g);
    const __m512i scale_hi = LaneByte(scales03, scales47, 2 * g + 1);
#pragma GCC unroll 4
    for (int r = 0; r < A; ++r) {
      const int8_t* xq = x[r][i].qs + 64 * g;
      __m512i dot_lo = _mm512_setzero_si512(), dot_hi = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        dot_lo = _mm512_dpbusd_epi32(dot_lo, lo[k], BroadcastActWord(xq + 4 * k));
        dot_hi = _mm512_dpbusd_epi32(dot_hi, hi[k], BroadcastActWord(xq + 4 * (8 + k)));
      }
      big_a[r] = _mm512_add_epi32(
          big_a[r], _mm512_add_epi32(_mm512_mullo_epi32(dot_lo, scale_lo), _mm512_mullo_epi32(dot_hi, scale_hi)));
    }
  }
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
HWY_INLINE void K4PanelRowsT(const PanelBlock* panel, const VnniK4ActBlock* const* xs, int64_t nb, __m512* lanes) {
  __m512 a[A], b[A];
  for (int k = 0; k < A; ++k) a[k] = b[k] = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // Decode streams the weights from DRAM: fetch the super-block two ahead (36 lines).
    PrefetchBlockAhead<kK4PanelPrefetchBlocks>(panel + i);
    K4PanelBlock<A>(panel[i], xs, i, a, b);
  }
  for (int k = 0; k < A; ++k) lanes[k] = _mm512_sub_ps(a[k], b[k]);
}

// The Q4_K or Q5_K tile (PanelBlock: Q4_KPanelBlock or Q5_KPanelBlock) on prepared
// activations (VnniK4ActPrepare): out[c * out_stride + r] for r < n_rows (a multiple of 16,
// weight at a panel's first byte), c < n_act.
template <class PanelBlock>
inline void VnniK4PanelRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared,
                           size_t /*act_stride*/, int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  RunPanels<PanelBlock, VnniK4ActBlock, kK4ActRowsPerPass>(
      weight, row_stride, n_rows, prepared, n_act, n / kQK_K, out, out_stride,
      [](auto act_rows, const PanelBlock* panel, const VnniK4ActBlock* const* xs, int64_t nb, __m512* lanes)
          HWY_ATTR { K4PanelRowsT<decltype(act_rows)::value>(panel, xs, nb, lanes); });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_ROW_PANELS_K_INL_H_ toggle
