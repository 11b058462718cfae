// The AVX512-VNNI kernels for the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0)
// in row panels (quant/row_panels.h), used by dot_panel.cc in its AVX3_DL pass, for every
// batch size.
//
// One WEIGHT row per lane: a panel block's four 64-byte groups give every lane (row) four
// quant bytes; masked and shifted, they are the eight unsigned operands, and each of an
// activation block's eight words, broadcast, is the signed one. Eight vpdpbusd leave each
// lane with its row's exact block dot, the 16 rows' scales are one load, and the block's
// scale product and fma are one vector op each: no horizontal reduction and no gather, which
// is what the row-major one-row kernel spends most of its time on. The unpacked weights are
// shared by up to four activation rows, so a batch costs in proportion to its size (the
// activation-panel tile of vnni_q-inl.h computes 16 activation rows whatever the batch).
// Q8_0 has eight byte groups instead of four nibble pairs; Q5_0 and Q5_1 add 16 to the
// nibbles whose fifth bit is set (one vpshufbitqmb per group picks each byte's bit from its
// lane's qh word); Q4_1 and Q5_1 run a second set of chains for the offsets m.
//
// The result follows vnni_q-inl.h's per-element definition (block b into chain (b/2) mod 4
// in block order, p_b = d_w * d_x, then ChainSum's tree; for Q4_1 and Q5_1 plus the mchains'
// ChainSum of m_w * s_x in the same order), so it equals the row-major kernels' float for
// float.
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

#include <algorithm>
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

// Activation bytes p[0..3] as one int32 broadcast to every lane (the signed operand of
// vpdpbusd), loaded straight from memory (vpbroadcastd m32). From set1 of a memcpy'd word
// GCC 12 made 64-bit loads into general registers, shifts and register broadcasts: two
// extra uops per vpdpbusd.
HWY_INLINE __m512i BroadcastActWord(const int8_t* p) { return _mm512_broadcastd_epi32(_mm_loadu_si32(p)); }

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

// An activation block as the kernel reads it: the quants, the scale d_x and, for the
// formats without an offset m (Q8_0 activations), the bias kBias * sum(x), for Q4_1 and
// Q5_1 (Q8_1 activations) s_x = d_x * sum(x) as stored; prepared once per matmul (40 bytes
// where the Q8_0 block had 34).
struct VnniActBlock {
  int8_t qs[32];
  union {
    int32_t bias;     // Q4_0, Q5_0, Q8_0
    float sum_scale;  // Q4_1, Q5_1
  };
  float scale;
};

inline size_t VnniActPreparedBytes(int64_t n_act, int64_t n) {
  return static_cast<size_t>(n_act * (n / kQK)) * sizeof(VnniActBlock);
}

// Calls fill(xb, x) for every activation block x (XBlock: BlockQ8_0 or BlockQ8_1) after
// copying its quants and scale.
template <class XBlock, class Fill>
inline void VnniActPrepareBlocks(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared,
                                 const Fill& fill) {
  const float* f16 = fp16_table();
  const int64_t nb = n / kQK;
  auto* out = static_cast<VnniActBlock*>(prepared);
  for (int64_t c = 0; c < n_act; ++c) {
    const auto* x = reinterpret_cast<const XBlock*>(static_cast<const uint8_t*>(act) + c * act_stride);
    for (int64_t b = 0; b < nb; ++b) {
      VnniActBlock& xb = out[c * nb + b];
      std::memcpy(xb.qs, x[b].qs, sizeof(xb.qs));
      xb.scale = f16[x[b].d];
      fill(xb, x[b]);
    }
  }
}

// kBias: the weight format's offset correction per unit of sum(x) (vnni_q-inl.h): -8 for
// Q4_0's nibbles, -16 for Q5_0's levels, -128 for Q8_0's bytes made unsigned.
template <int kBias>
inline void VnniActPrepareWithBias(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  VnniActPrepareBlocks<BlockQ8_0>(act, act_stride, n_act, n, prepared, [](VnniActBlock& xb, const BlockQ8_0& x) {
    int32_t sum = 0;
    for (int e = 0; e < kQK; ++e) sum += x.qs[e];
    xb.bias = kBias * sum;
  });
}

inline void VnniActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  VnniActPrepareWithBias<-8>(act, act_stride, n_act, n, prepared);
}
inline void VnniQ50ActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  VnniActPrepareWithBias<-16>(act, act_stride, n_act, n, prepared);
}
inline void VnniQ8ActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  VnniActPrepareWithBias<-128>(act, act_stride, n_act, n, prepared);
}
// Q4_1 and Q5_1: Q8_1 activations, no bias (the levels are the unsigned side as they are).
inline void VnniMinActPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  const float* f16 = fp16_table();
  VnniActPrepareBlocks<BlockQ8_1>(act, act_stride, n_act, n, prepared,
                                  [f16](VnniActBlock& xb, const BlockQ8_1& x) { xb.sum_scale = f16[x.s]; });
}

// The panel formats with an offset m (Q8_1 activations, the mchains).
template <class PanelBlock>
inline constexpr bool kPanelHasMin =
    std::is_same_v<PanelBlock, Q4_1PanelBlock> || std::is_same_v<PanelBlock, Q5_1PanelBlock>;
// The panel formats with a fifth bit per level (qh).
template <class PanelBlock>
inline constexpr bool kPanelHasFifthBits =
    std::is_same_v<PanelBlock, Q5_0PanelBlock> || std::is_same_v<PanelBlock, Q5_1PanelBlock>;

// The eight unsigned level groups g of a panel block (group k: elements 4k..4k+3 of every
// row) and its 16 scales d into each activation row's chain: vnni_q-inl.h's exact block
// dot (started at the prepared bias, or at 0 for the formats with an offset m), p = d_w *
// d_x, chain = fma(float(dot), p, chain).
template <int A, bool kHasMin>
HWY_INLINE void BlockIntoChains(const __m512i* g, const uint16_t* d, const VnniActBlock* const* x, int64_t ib,
                                __m512* chains) {
  const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d)));
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) {
    const VnniActBlock& xb = x[a][ib];
    // Two partial sums so the vpdpbusd latency overlaps; integer adds are exact.
    __m512i s0 = kHasMin ? _mm512_setzero_si512() : _mm512_set1_epi32(xb.bias), s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      s0 = _mm512_dpbusd_epi32(s0, g[k], BroadcastActWord(xb.qs + 4 * k));
      s1 = _mm512_dpbusd_epi32(s1, g[k + 4], BroadcastActWord(xb.qs + 4 * (k + 4)));
    }
    const __m512 p = _mm512_mul_ps(dw, _mm512_set1_ps(xb.scale));
    chains[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), p, chains[a]);
  }
}

// The nibbles of a panel block's four quant groups: g[k] elements 4k..4k+3 of each row (low
// nibbles), g[k + 4] elements 16+4k..16+4k+3 (high).
HWY_INLINE void NibbleGroups(const uint8_t (*qs)[64], __m512i* g) {
  const __m512i low = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i q = _mm512_loadu_si512(qs[k]);
    g[k] = _mm512_and_si512(q, low);
    g[k + 4] = _mm512_and_si512(_mm512_srli_epi16(q, 4), low);
  }
}

// Q5_0 and Q5_1: plus 16 on each level whose fifth bit is set. Lane j's qh word holds bit e
// for element e of row j; vpshufbitqmb picks, for byte t of each 64-bit lane (rows 2i, 2i+1),
// the bit its control byte names, so control bytes 4k + {0..3} and 32 + 4k + {0..3} give
// group k's byte mask for both rows.
HWY_INLINE void AddFifthBits(const uint8_t* qh, __m512i* g) {
  const __m512i bits = _mm512_loadu_si512(qh);
  const __m512i sixteen = _mm512_set1_epi8(16);
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    const __m512i select = _mm512_set1_epi64(0x2322212003020100LL + 0x0404040404040404LL * k);
    g[k] = _mm512_mask_add_epi8(g[k], _mm512_bitshuffle_epi64_mask(bits, select), g[k], sixteen);
  }
}

// The eight unsigned level groups of a panel block (group k: elements 4k..4k+3 of every
// row): for Q4_0, Q4_1, Q5_0 and Q5_1 the nibbles, plus the fifth bits where the format has
// them.
template <class PanelBlock>
HWY_INLINE void UnpackPanelBlock(const PanelBlock& wb, __m512i* g) {
  NibbleGroups(wb.qs, g);
  if constexpr (kPanelHasFifthBits<PanelBlock>) AddFifthBits(wb.qh, g);
}

// The same for a Q8_0 panel: the row's bytes w, made unsigned as w + 128 (w XOR 0x80); the
// prepared bias -128 sum(x) is the start value.
HWY_INLINE void UnpackPanelBlock(const Q8_0PanelBlock& wb, __m512i* g) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) g[k] = _mm512_xor_si512(_mm512_loadu_si512(wb.qs[k]), flip);
}

// Block ib of one panel x A activation rows into each activation row's chain, chains[a],
// started at 0 where the format has an offset m.
template <int A, class PanelBlock>
HWY_INLINE void PanelRowsBlock(const PanelBlock& wb, const VnniActBlock* const* x, int64_t ib, __m512* chains) {
  __m512i g[8];
  UnpackPanelBlock(wb, g);
  BlockIntoChains<A, kPanelHasMin<PanelBlock>>(g, wb.d, x, ib, chains);
}

// Four chains of A vectors, from +0, stepped over the blocks in the per-element definition's
// order (step(ib, chain) adds block ib into the chain's A vectors; it is also called for ib
// up to nb rounded up to 8 and must skip ib >= nb), then added in ChainSum's tree, lane by
// lane, into sums[a].
template <int A, class Step>
HWY_INLINE void SumChainsInBlockOrder(int64_t nb, const Step& step, __m512* sums) {
  __m512 c0[A], c1[A], c2[A], c3[A];
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) c0[a] = c1[a] = c2[a] = c3[a] = _mm512_setzero_ps();
  StepChainsInBlockOrder(nb, step, c0, c1, c2, c3);
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) sums[a] = LaneChainSum(c0[a], c1[a], c2[a], c3[a]);
}

// Q4_1 and Q5_1: adds each activation row's mchains (m_w * s_x, in the chains' block order
// and ChainSum's tree) to lanes[a], a pass of its own over the panel's m (still in cache):
// with both sets live, 32 vectors of chains alone would fill the register file.
template <int A, class PanelBlock>
HWY_INLINE void AddPanelMins(const PanelBlock* panel, const VnniActBlock* const* x, int64_t nb, __m512* lanes) {
  __m512 mins[A];
  SumChainsInBlockOrder<A>(
      nb,
      [&](int64_t ib, __m512* mchain) HWY_ATTR {
        if (ib >= nb) return;
        const __m512 mw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel[ib].m)));
#pragma GCC unroll 4
        for (int a = 0; a < A; ++a) mchain[a] = _mm512_fmadd_ps(mw, _mm512_set1_ps(x[a][ib].sum_scale), mchain[a]);
      },
      mins);
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) lanes[a] = _mm512_add_ps(lanes[a], mins[a]);
}

// One panel x A activation rows: lanes[a] lane j = weight row j with activation row a; the
// four chains of each activation row stay in registers.
template <int A, class PanelBlock>
HWY_INLINE void PanelRowsT(const PanelBlock* panel, const VnniActBlock* const* x, int64_t nb, __m512* lanes) {
  SumChainsInBlockOrder<A>(
      nb,
      [&](int64_t ib, __m512* chain) HWY_ATTR {
        if (ib >= nb) return;
        // Past the panel's end this fetches the next panel's (usually this thread's next)
        // or nothing useful; a prefetch never faults.
        PrefetchBlockAhead<kPanelPrefetchBlocks>(panel + ib);
        PanelRowsBlock<A>(panel[ib], x, ib, chain);
      },
      lanes);
  if constexpr (kPanelHasMin<PanelBlock>) AddPanelMins<A>(panel, x, nb, lanes);
}

// Several panels at once, for batches (kMultiPanelMinActRows activation rows or more, below).
// vpdpbusd's signed operand is an activation word broadcast to every lane, and a broadcast
// from memory is a load: on this CPU (AMD Zen 5; bench/port_throughput, numbers in
// docs/kernels.md) two loads and two vpdpbusd (or float multiplies, fmas) issue per cycle,
// so PanelRowsT, with about 12 loads per 8 vpdpbusd, is bound by its loads. Here NP panels'
// unpacked groups (8 NP registers) share each broadcast word, which leaves the kernel bound
// by the vpdpbusd pipes (8 vpdpbusd, a multiply and an fma per block, panel and activation
// row); the activation rows run innermost with their chains in a buffer on the stack (L1),
// so each block of each panel is unpacked once for all of them. Same per-lane operations in
// the same order, so the same floats.
inline constexpr int kPanelsPerPass = 3;           // 24 of the 32 registers
inline constexpr int64_t kMultiPanelActRows = 16;  // activation rows per pass (12 KB of chains)
// Below this many activation rows PanelRowsT (one panel, chains in registers) is faster:
// the batch kernel's three weight streams are read less efficiently from DRAM, which
// matters while a pass is bound by the weights' bytes. The crossovers measured with
// row_panels_bench (16 matrices 5632 x 2048, two threads, alternating with the build
// without the batch kernel): 6 rows for Q4_0, 12 for Q8_0 (twice Q4_0's bytes a block), 4
// for Q4_1, Q5_0 and Q5_1 (whose one-panel kernel spends more per block).
template <class PanelBlock>
inline constexpr int64_t kMultiPanelMinActRows = std::is_same_v<PanelBlock, Q8_0PanelBlock>
                                                     ? 12
                                                     : (std::is_same_v<PanelBlock, Q4_0PanelBlock> ? 6 : 4);

// NP panels x n_act <= kMultiPanelActRows activation rows (x[a] the prepared blocks of row
// a): lanes[q * kMultiPanelActRows + a] lane j = row j of panel q with activation row a.
template <int NP, class PanelBlock>
HWY_INLINE void MultiPanelRows(const PanelBlock* const* panels, const VnniActBlock* const* x, int64_t n_act, int64_t nb,
                               __m512* lanes) {
  constexpr bool kHasMin = kPanelHasMin<PanelBlock>;
  constexpr int64_t kAhead = kPanelPrefetchBlocks / NP;
  // chains[(q * kMultiPanelActRows + a) * 4 + i]: chain i of panel q, activation row a.
  __m512 chains[NP * kMultiPanelActRows * 4];
  for (int q = 0; q < NP; ++q) {
    for (int64_t a = 0; a < n_act; ++a) {
      for (int i = 0; i < 4; ++i) chains[(q * kMultiPanelActRows + a) * 4 + i] = _mm512_setzero_ps();
    }
  }
  for (int64_t ib = 0; ib < nb; ++ib) {
    const int64_t chain = (ib / 2) % 4;  // StepChainsInBlockOrder's assignment
    __m512i g[NP][8];
    __m512 dw[NP];
#pragma GCC unroll 4
    for (int q = 0; q < NP; ++q) {
      // A third of PanelRowsT's distance in each of the three streams (about the same bytes
      // in flight; PanelRowsT's full distance in each was slower). Past a panel's end it
      // fetches the same panel of the next group (NP panels on), which is what this thread
      // reads next, not the next panel, which this pass is reading.
      PrefetchBlockAhead<kAhead>(panels[q] + ib + (ib + kAhead >= nb ? (NP - 1) * nb : 0));
      UnpackPanelBlock(panels[q][ib], g[q]);
      dw[q] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(panels[q][ib].d)));
    }
    for (int64_t a = 0; a < n_act; ++a) {
      const VnniActBlock& xb = x[a][ib];
      const __m512i start = kHasMin ? _mm512_setzero_si512() : _mm512_set1_epi32(xb.bias);
      __m512i s[NP];
#pragma GCC unroll 4
      for (int q = 0; q < NP; ++q) s[q] = start;
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m512i word = BroadcastActWord(xb.qs + 4 * k);
#pragma GCC unroll 4
        for (int q = 0; q < NP; ++q) s[q] = _mm512_dpbusd_epi32(s[q], g[q][k], word);
      }
      const __m512 dx = _mm512_set1_ps(xb.scale);
#pragma GCC unroll 4
      for (int q = 0; q < NP; ++q) {
        __m512& c = chains[(q * kMultiPanelActRows + a) * 4 + chain];
        c = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[q]), _mm512_mul_ps(dw[q], dx), c);
      }
    }
  }
  for (int q = 0; q < NP; ++q) {
    for (int64_t a = 0; a < n_act; ++a) {
      const __m512* c = chains + (q * kMultiPanelActRows + a) * 4;
      lanes[q * kMultiPanelActRows + a] = LaneChainSum(c[0], c[1], c[2], c[3]);
    }
    if constexpr (kHasMin) {
      ForActRowGroups<kActRowsPerPass>(n_act, [&](auto act_rows, int64_t c) HWY_ATTR {
        AddPanelMins<decltype(act_rows)::value>(panels[q], x + c, nb, lanes + q * kMultiPanelActRows + c);
      });
    }
  }
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

// A 32-element format's tile for batches (kMultiPanelMinActRows rows or more): panels in
// groups of kPanelsPerPass (the last group smaller), activation rows in groups of
// kMultiPanelActRows.
template <class PanelBlock>
inline void RunPanelGroups(const void* weight, size_t row_stride, int64_t n_rows, const VnniActBlock* x, int64_t n_act,
                           int64_t nb, float* out, int64_t out_stride) {
  const auto* w = static_cast<const uint8_t*>(weight);
  const int64_t n_panels = n_rows / kPanelRows;
  for (int64_t p = 0; p < n_panels; p += kPanelsPerPass) {
    const PanelBlock* panels[kPanelsPerPass];
    const int np = static_cast<int>(std::min<int64_t>(kPanelsPerPass, n_panels - p));
    for (int q = 0; q < np; ++q) panels[q] = reinterpret_cast<const PanelBlock*>(w + (p + q) * kPanelRows * row_stride);
    for (int64_t c = 0; c < n_act; c += kMultiPanelActRows) {
      const int64_t rows = std::min(kMultiPanelActRows, n_act - c);
      const VnniActBlock* xs[kMultiPanelActRows];
      for (int64_t a = 0; a < rows; ++a) xs[a] = x + (c + a) * nb;
      __m512 lanes[kPanelsPerPass * kMultiPanelActRows];
      static_assert(kPanelsPerPass == 3, "the dispatch below");
      if (np == 3) {
        MultiPanelRows<3>(panels, xs, rows, nb, lanes);
      } else if (np == 2) {
        MultiPanelRows<2>(panels, xs, rows, nb, lanes);
      } else {
        MultiPanelRows<1>(panels, xs, rows, nb, lanes);
      }
      for (int q = 0; q < np; ++q) {
        for (int64_t a = 0; a < rows; ++a) {
          _mm512_storeu_ps(out + (c + a) * out_stride + (p + q) * kPanelRows, lanes[q * kMultiPanelActRows + a]);
        }
      }
    }
  }
}

// A 32-element format's tile on prepared activations (VnniActPrepare and its siblings, by
// the format's bias): out[c * out_stride + r].
template <class PanelBlock>
inline void VnniPanelRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared,
                         size_t /*act_stride*/, int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  if (n_act >= kMultiPanelMinActRows<PanelBlock>) {
    RunPanelGroups<PanelBlock>(weight, row_stride, n_rows, static_cast<const VnniActBlock*>(prepared), n_act, n / kQK,
                               out, out_stride);
    return;
  }
  RunPanels<PanelBlock, VnniActBlock, kActRowsPerPass>(
      weight, row_stride, n_rows, prepared, n_act, n / kQK, out, out_stride,
      [](auto act_rows, const PanelBlock* panel, const VnniActBlock* const* xs, int64_t nb, __m512* lanes)
          HWY_ATTR { PanelRowsT<decltype(act_rows)::value>(panel, xs, nb, lanes); });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_ROW_PANELS_INL_H_ toggle
