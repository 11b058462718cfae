// The AVX512-VNNI kernels for Q4_0 and Q8_0 weights in row panels (quant/row_panels.h),
// used by dot_panel.cc in its AVX3_DL pass, for every batch size. (Q8_0 works as Q4_0 below
// with eight byte groups instead of four nibble pairs.)
//
// One WEIGHT row per lane: a panel block's four 64-byte groups give every lane (row) four
// quant bytes; masked and shifted, they are the eight unsigned operands, and each of an
// activation block's eight words, broadcast, is the signed one. Eight vpdpbusd leave each
// lane with its row's exact block dot, the 16 rows' scales are one load, and the block's
// scale product and fma are one vector op each: no horizontal reduction and no gather, which
// is what the row-major one-row kernel spends most of its time on. The unpacked weights are
// shared by up to four activation rows, so a batch costs in proportion to its size (the
// activation-panel tile of vnni_q-inl.h computes 16 activation rows whatever the batch).
//
// The result follows vnni_q-inl.h's per-element definition (block b into chain (b/2) mod 4
// in block order, p_b = d_w * d_x, then ChainSum's tree), so it equals the row-major
// kernels' float for float.
#if defined(SF_QUANT_VNNI_ROW_PANELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_ROW_PANELS_INL_H_
#undef SF_QUANT_VNNI_ROW_PANELS_INL_H_
#else
#define SF_QUANT_VNNI_ROW_PANELS_INL_H_
#endif

#include "hwy/highway.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // used only in the AVX3_DL pass below
#endif

#include <cstring>
#include <type_traits>

#include "base/fp16.h"
#include "hwy/cache_control.h"
#include "quant/block_types.h"
#include "quant/row_panel_blocks.h"
#include "quant/vnni_q-inl.h"  // StepChainsInBlockOrder

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // see vnni_q-inl.h
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, see vnni_q-inl.h
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL

inline constexpr int kPanelRows = 16;
// Panel blocks fetched ahead of the one in use (9 KB): decode streams the weights from
// DRAM, and this many outstanding lines lift one thread from ~21 to ~36 GB/s here.
inline constexpr int64_t kPanelPrefetchBlocks = 32;
// Activation rows sharing one unpacking of the weights (4 x 4 chain vectors in registers).
inline constexpr int kActRowsPerPass = 4;

// Calls pass(std::integral_constant<int, A>{}, c) over activation rows c..c+A-1: groups of
// kMax (<= 4), then one group of the 1..kMax-1 rows left.
template <int kMax, class Pass>
HWY_INLINE void ForActRowGroups(int64_t n_act, const Pass& pass) {
  static_assert(kMax >= 1 && kMax <= 4, "the remainder below is at most three rows");
  int64_t c = 0;
  for (; c + kMax <= n_act; c += kMax) pass(std::integral_constant<int, kMax>{}, c);
  switch (n_act - c) {
    case 3:
      if constexpr (kMax > 3) pass(std::integral_constant<int, 3>{}, c);
      break;
    case 2:
      if constexpr (kMax > 2) pass(std::integral_constant<int, 2>{}, c);
      break;
    case 1:
      if constexpr (kMax > 1) pass(std::integral_constant<int, 1>{}, c);
      break;
    default:
      break;
  }
}

// An activation block as the kernel reads it: the quants, the Q4_0 bias -8 sum(x) and the
// scale d_x, prepared once per matmul (40 bytes where the Q8_0 block had 34).
struct VnniActBlock {
  int8_t qs[32];
  int32_t bias;
  float scale;
};

inline size_t VnniActPreparedBytes(int64_t n_act, int64_t n) {
  return static_cast<size_t>(n_act * (n / kQK)) * sizeof(VnniActBlock);
}

// kBias: the weight format's offset correction per unit of sum(x) (vnni_q-inl.h): -8 for
// Q4_0's nibbles, -128 for Q8_0's bytes made unsigned.
template <int kBias>
inline void VnniActPrepareWithBias(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  const float* f16 = fp16_table();
  const int64_t nb = n / kQK;
  auto* out = static_cast<VnniActBlock*>(prepared);
  for (int64_t c = 0; c < n_act; ++c) {
    const auto* x = reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(act) + c * act_stride);
    for (int64_t b = 0; b < nb; ++b) {
      VnniActBlock& xb = out[c * nb + b];
      std::memcpy(xb.qs, x[b].qs, sizeof(xb.qs));
      int32_t sum = 0;
      for (int e = 0; e < kQK; ++e) sum += x[b].qs[e];
      xb.bias = kBias * sum;
      xb.scale = f16[x[b].d];
    }
  }
}

inline void VnniActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  VnniActPrepareWithBias<-8>(act, act_stride, n_act, n, prepared);
}
inline void VnniQ8ActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  VnniActPrepareWithBias<-128>(act, act_stride, n_act, n, prepared);
}

// The eight unsigned level groups g of a panel block (group k: elements 4k..4k+3 of every
// row) and its 16 scales d into each activation row's chain: vnni_q-inl.h's exact block
// dot (started at the prepared bias), p = d_w * d_x, chain = fma(float(dot), p, chain).
template <int A>
HWY_INLINE void BlockIntoChains(const __m512i* g, const uint16_t* d, const VnniActBlock* const* x, int64_t ib,
                                __m512* chains) {
  const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d)));
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) {
    const VnniActBlock& xb = x[a][ib];
    int32_t words[8];
    std::memcpy(words, xb.qs, sizeof(words));
    // Two partial sums so the vpdpbusd latency overlaps; integer adds are exact.
    __m512i s0 = _mm512_set1_epi32(xb.bias), s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      s0 = _mm512_dpbusd_epi32(s0, g[k], _mm512_set1_epi32(words[k]));
      s1 = _mm512_dpbusd_epi32(s1, g[k + 4], _mm512_set1_epi32(words[k + 4]));
    }
    const __m512 p = _mm512_mul_ps(dw, _mm512_set1_ps(xb.scale));
    chains[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), p, chains[a]);
  }
}

// Block ib of one panel x A activation rows into each activation row's chain, chains[a].
template <int A>
HWY_INLINE void PanelRowsBlock(const Q4_0PanelBlock& wb, const VnniActBlock* const* x, int64_t ib, __m512* chains) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  __m512i g[8];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i q = _mm512_loadu_si512(wb.qs[k]);
    g[k] = _mm512_and_si512(q, low);                            // elements 4k..4k+3 of each row
    g[k + 4] = _mm512_and_si512(_mm512_srli_epi16(q, 4), low);  // elements 16+4k..16+4k+3
  }
  BlockIntoChains<A>(g, wb.d, x, ib, chains);
}

// The same for a Q8_0 panel: the eight groups are the row's bytes w, made unsigned as
// w + 128 (w XOR 0x80), with the prepared bias -128 sum(x) as start value.
template <int A>
HWY_INLINE void PanelRowsBlock(const Q8_0PanelBlock& wb, const VnniActBlock* const* x, int64_t ib, __m512* chains) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i g[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) g[k] = _mm512_xor_si512(_mm512_loadu_si512(wb.qs[k]), flip);  // elements 4k..4k+3
  BlockIntoChains<A>(g, wb.d, x, ib, chains);
}

// One panel x A activation rows: lanes[a] lane j = weight row j with activation row a; the
// four chains of each activation row stay in registers. PanelBlock: Q4_0's or Q8_0's.
template <int A, class PanelBlock>
HWY_INLINE void PanelRowsT(const PanelBlock* panel, const VnniActBlock* const* x, int64_t nb, __m512* lanes) {
  __m512 c0[A], c1[A], c2[A], c3[A];
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) c0[a] = c1[a] = c2[a] = c3[a] = _mm512_setzero_ps();
  StepChainsInBlockOrder(
      nb,
      [&](int64_t ib, __m512* chain) HWY_ATTR {
        if (ib >= nb) return;
        // Past the panel's end this fetches the next panel's (usually this thread's next)
        // or nothing useful; a prefetch never faults.
        PrefetchBlockAhead<kPanelPrefetchBlocks>(panel + ib);
        PanelRowsBlock<A>(panel[ib], x, ib, chain);
      },
      c0, c1, c2, c3);
  // ChainSum's tree, lane by lane.
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) lanes[a] = _mm512_add_ps(_mm512_add_ps(c0[a], c2[a]), _mm512_add_ps(c1[a], c3[a]));
}

// The DotTile run of a format's panel kernel, over whole panels (n_rows a multiple of 16,
// weight at a panel's first byte) and every activation row: for each panel and each group
// of A <= kMax activation rows c..c+A-1 (prepared blocks, nb per row),
// panel_rows(std::integral_constant<int, A>, panel, xs, nb, lanes) sets lanes[a] lane j to
// weight row j with activation row c + a, stored to out[(c + a) * out_stride + r + j].
template <class PanelBlock, class ActBlock, int kMax, class PanelRows>
HWY_INLINE void RunPanels(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared, int64_t n_act,
                          int64_t nb, float* out, int64_t out_stride, const PanelRows& panel_rows) {
  const auto* w = static_cast<const uint8_t*>(weight);
  const auto* x = static_cast<const ActBlock*>(prepared);
  for (int64_t r = 0; r < n_rows; r += kPanelRows) {
    const auto* panel = reinterpret_cast<const PanelBlock*>(w + r * row_stride);
    const auto pass = [&](auto act_rows, int64_t c) HWY_ATTR {
      constexpr int A = decltype(act_rows)::value;
      const ActBlock* xs[A];
      for (int a = 0; a < A; ++a) xs[a] = x + (c + a) * nb;
      __m512 lanes[A];
      panel_rows(act_rows, panel, xs, nb, lanes);
      for (int a = 0; a < A; ++a) _mm512_storeu_ps(out + (c + a) * out_stride + r, lanes[a]);
    };
    ForActRowGroups<kMax>(n_act, pass);
  }
}

// The Q4_0 tile on prepared activations (VnniActPrepare): out[c * out_stride + r].
inline void VnniPanelRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared,
                         size_t /*act_stride*/, int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  RunPanels<Q4_0PanelBlock, VnniActBlock, kActRowsPerPass>(
      weight, row_stride, n_rows, prepared, n_act, n / kQK, out, out_stride,
      [](auto act_rows, const Q4_0PanelBlock* panel, const VnniActBlock* const* xs, int64_t nb, __m512* lanes)
          HWY_ATTR { PanelRowsT<decltype(act_rows)::value>(panel, xs, nb, lanes); });
}

// The Q8_0 tile on prepared activations (VnniQ8ActPrepare): out[c * out_stride + r].
inline void VnniQ8PanelRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared,
                           size_t /*act_stride*/, int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  RunPanels<Q8_0PanelBlock, VnniActBlock, kActRowsPerPass>(
      weight, row_stride, n_rows, prepared, n_act, n / kQK, out, out_stride,
      [](auto act_rows, const Q8_0PanelBlock* panel, const VnniActBlock* const* xs, int64_t nb, __m512* lanes)
          HWY_ATTR { PanelRowsT<decltype(act_rows)::value>(panel, xs, nb, lanes); });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_ROW_PANELS_INL_H_ toggle
