// The AVX512-VNNI path of the Q4_K and Q5_K kernels (Highway target AVX3_DL), shared by the
// one-row kernel (dot_simd_k.cc) and the tile (dot_tile_k.cc); the same design as
// vnni_q-inl.h for Q4_0/Q8_0: the tile puts one activation row in each of 16 lanes
// (activations interleaved once per matmul), broadcasts four weight bytes to every lane and
// lets vpdpbusd sum them. Q5_K is Q4_K with a fifth bit per level (qh[l], bit 2g for the low
// nibble of qs[32g + l], bit 2g + 1 for the high one): the levels are 0..31, still unsigned
// bytes for vpdpbusd, and everything else (scales, mins, the chains) is the same.
//
// The result is defined per output element, so dot and tile are bit-identical. Per
// super-block i, with the exact integers
//     A_i = sum_s scale_s * (sum of q x over sub-block s)     (q: the levels, 0..15 or 0..31)
//     B_i = sum_s min_s * (sum of x over sub-block s)          (from Q8_K's bsums)
// and p_i = fl(d_i * d_x,i), m_i = fl(dmin_i * d_x,i), two chains over the super-blocks:
//     a = fma(float(A_i), p_i, a),  b = fma(float(B_i), m_i, b),  result a - b.
// (float(A_i) rounds when |A_i| > 2^24, the same way in both kernels.)
#if defined(SF_QUANT_VNNI_K_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_K_INL_H_
#undef SF_QUANT_VNNI_K_INL_H_
#else
#define SF_QUANT_VNNI_K_INL_H_
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
#include "quant/simd_common-inl.h"
#include "quant/vnni_panels-inl.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // see vnni_q-inl.h
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, see vnni_q-inl.h
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL

// A Q4_K super-block's eight six-bit scales and mins (layout: unpack_scale_min_k4), as two
// 8-byte words: bytes 0-3 carry scales 0-3 in their low six bits and the top bits of scales
// 4-7 in bits 6-7; bytes 4-7 the same for the mins; bytes 8-11 the low four bits of scales
// 4-7 (low nibbles) and mins 4-7 (high nibbles).
struct K4ScaleMin {
  uint64_t scales, mins;  // byte s: scale_s / min_s
};
HWY_INLINE K4ScaleMin UnpackK4(const uint8_t* q) {
  uint32_t w0, w1, w2;
  std::memcpy(&w0, q, 4);
  std::memcpy(&w1, q + 4, 4);
  std::memcpy(&w2, q + 8, 4);
  const uint32_t scales_hi = (w2 & 0x0F0F0F0Fu) | (((w0 >> 6) & 0x03030303u) << 4);
  const uint32_t mins_hi = ((w2 >> 4) & 0x0F0F0F0Fu) | (((w1 >> 6) & 0x03030303u) << 4);
  return K4ScaleMin{(w0 & 0x3F3F3F3Fu) | (uint64_t{scales_hi} << 32), (w1 & 0x3F3F3F3Fu) | (uint64_t{mins_hi} << 32)};
}

// Four bytes as one int32 (for a broadcast).
HWY_INLINE int32_t Word(const uint8_t* p) {
  int32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

HWY_INLINE int Byte(uint64_t word, int i) { return static_cast<int>((word >> (8 * i)) & 0xFF); }

// The sub-block sums of x (two bsums of 16 each) as eight int16 lanes (|sum| <= 32 * 127).
HWY_INLINE __m128i SubBlockSums(const BlockQ8_K& x) {
  const __m256i pairs =
      _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)), _mm256_set1_epi16(1));
  return _mm_packs_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
}

// B_i: the mins against the sub-block sums of x; exact.
HWY_INLINE int32_t MinsDot(uint64_t mins, __m128i sub_sums) {
  const __m128i m = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(mins)));
  const __m128i prod = _mm_madd_epi16(m, sub_sums);  // four int32: pairs of sub-blocks
  const __m128i two = _mm_add_epi32(prod, _mm_unpackhi_epi64(prod, prod));
  return _mm_cvtsi128_si32(_mm_add_epi32(two, _mm_shuffle_epi32(two, 1)));
}

// Super-blocks (144 bytes each) fetched ahead of the one in use, in the row being read.
inline constexpr int kK4PrefetchBlocks = 16;

// Each kernel fetches the super-block kK4PrefetchBlocks after the one in use (past a row's
// end: the next row's start; PrefetchBlockAhead). Measured on 2 threads with 1.1B-sized
// matrices: the one-row kernel went from ~41 to ~45 GB/s; the activation-panel tile at 8-16
// rows took 0.56-0.57 ms against 0.73-0.91 ms without it (row_panels_bench, GGUF rows
// column, two alternating runs).

// Whether the block has Q5_K's fifth bits.
template <class Block>
inline constexpr bool kFiveBit = std::is_same_v<Block, BlockQ5_K>;

// Q5_K's levels (0..31) of one super-block in the order the panel takes them: bytes
// 64g..64g+31 are the low nibbles of qs[32g..32g+31] with bit 2g of qh[0..31] as bit 4,
// bytes 64g+32.. the high nibbles with bit 2g + 1. Built once per block with 256-bit
// operations, so the panel's inner loop only broadcasts four-byte words, as for Q4_K (the
// fifth bits added word by word in the inner loop made the tile 2.3x slower than Q4_K's).
HWY_INLINE void FiveBitLevelsOfBlock(const BlockQ5_K& wb, uint8_t* levels) {
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qh));
  const __m256i nibble = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(0x01);
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qs + 32 * g));
    // A 16-bit shift brings bit k of both bytes to their bit 0; the mask keeps only that.
    const __m256i bit_lo = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g)), one);
    const __m256i bit_hi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g + 1)), one);
    const __m256i lo = _mm256_or_si256(_mm256_and_si256(qs, nibble), _mm256_slli_epi16(bit_lo, 4));
    const __m256i hi =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qs, 4), nibble), _mm256_slli_epi16(bit_hi, 4));
    _mm256_store_si256(reinterpret_cast<__m256i*>(levels + 64 * g), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(levels + 64 * g + 32), hi);
  }
}

// R Q4_K or Q5_K weight rows x one Q8_K activation row, nb super-blocks: out[r].
template <class Block, int R>
HWY_INLINE void VnniK4DotRowsT(const uint8_t* w, size_t stride, const BlockQ8_K* x, int64_t nb, float* out) {
  const float* f16 = fp16_table();
  float a[R], b[R];
  for (int r = 0; r < R; ++r) a[r] = b[r] = 0.0f;
  // Sub-block pair g: lanes 0-7 take scale 2g, lanes 8-15 scale 2g + 1.
  const __m512i shift = _mm512_set_epi64(4, 4, 4, 4, 0, 0, 0, 0);
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ8_K& xb = x[i];
    const __m128i sub_sums = SubBlockSums(xb);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Block& wb = reinterpret_cast<const Block*>(w + r * stride)[i];
      PrefetchBlockAhead<kK4PrefetchBlocks>(&wb);
      const K4ScaleMin sm = UnpackK4(wb.scales);
      const __m512i scales =
          _mm512_zextsi256_si512(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(sm.scales))));
      __m512i high_bits = _mm512_setzero_si512();
      if constexpr (kFiveBit<Block>)
        high_bits = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qh)));
      __m512i acc = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        // 32 bytes of levels: low nibbles are sub-block 2g, high nibbles 2g + 1, which is
        // the order of the 64 activation bytes 64g..64g+63.
        const __m512i both =
            _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qs + 32 * g)));
        __m512i q = _mm512_and_si512(_mm512_srlv_epi64(both, shift), _mm512_set1_epi8(0x0F));
        if constexpr (kFiveBit<Block>) {
          // Bit 2g (lanes of sub-block 2g) or 2g + 1 of each qh byte, moved to bit 4: a
          // 64-bit shift brings bit k of every byte to its bit 0 (bits from the next byte
          // land above it and the mask drops them).
          const __m512i bit = _mm512_set_epi64(2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g, 2 * g, 2 * g, 2 * g);
          const __m512i fifth = _mm512_and_si512(_mm512_srlv_epi64(high_bits, bit), _mm512_set1_epi8(0x01));
          q = _mm512_or_si512(q, _mm512_slli_epi16(fifth, 4));
        }
        const __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q,
                                              _mm512_loadu_si512(reinterpret_cast<const void*>(xb.qs + 64 * g)));
        const __m512i pick =
            _mm512_set_epi32(2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1,
                             2 * g, 2 * g, 2 * g, 2 * g, 2 * g, 2 * g, 2 * g, 2 * g);
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(s, _mm512_permutexvar_epi32(pick, scales)));
      }
      const int32_t big_a = _mm512_reduce_add_epi32(acc);  // integer: exact in any order
      a[r] = __builtin_fmaf(static_cast<float>(big_a), f16[wb.d] * xb.d, a[r]);
      b[r] = __builtin_fmaf(static_cast<float>(MinsDot(sm.mins, sub_sums)), f16[wb.dmin] * xb.d, b[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = a[r] - b[r];
}

// ---- The tile: 16 Q8_K activation rows per panel, prepared once per matmul. ----

// Per (panel, super-block): 64 vectors of four elements per lane (lane c: activation row c),
// the sub-block sums of x as int16 pairs (vector k, lane c: sums of sub-blocks 2k and 2k + 1
// of row c) for vpdpwssd with the mins, and the rows' scales d_x.
struct VnniK4PanelBlock {
  int8_t groups[64][64];
  int16_t sub_sums[4][2 * kPanel];
  float scale[kPanel];
};

inline size_t VnniK4PreparedBytes(int64_t n_act, int64_t n) {
  return PreparedPanelBytes(n_act, n / kQK_K, sizeof(VnniK4PanelBlock));
}

inline void VnniK4Prepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  PreparePanels<VnniK4PanelBlock, BlockQ8_K>(
      act, act_stride, n_act, n / kQK_K, prepared, [](VnniK4PanelBlock& pb, int c, const BlockQ8_K& xb) {
        for (int e = 0; e < 64; ++e) std::memcpy(&pb.groups[e][4 * c], xb.qs + 4 * e, 4);
        for (int k = 0; k < 4; ++k) {
          pb.sub_sums[k][2 * c] = static_cast<int16_t>(xb.bsums[4 * k] + xb.bsums[4 * k + 1]);
          pb.sub_sums[k][2 * c + 1] = static_cast<int16_t>(xb.bsums[4 * k + 2] + xb.bsums[4 * k + 3]);
        }
        pb.scale[c] = xb.d;
      });
}

// R Q4_K or Q5_K weight rows x one panel: a[r], b[r] lane c = the two chains of weight row
// r with activation row c.
template <class Block, int R>
HWY_INLINE void VnniK4PanelT(const uint8_t* w, size_t stride, const VnniK4PanelBlock* panel, int64_t nb, __m512* out) {
  const float* f16 = fp16_table();
  __m512 a[R], b[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) a[r] = b[r] = _mm512_setzero_ps();
  const __m512i low = _mm512_set1_epi8(0x0F);
  for (int64_t i = 0; i < nb; ++i) {
    const VnniK4PanelBlock& pb = panel[i];
    const __m512 dx = _mm512_load_ps(pb.scale);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Block& wb = reinterpret_cast<const Block*>(w + r * stride)[i];
      PrefetchBlockAhead<kK4PrefetchBlocks>(&wb);
      const K4ScaleMin sm = UnpackK4(wb.scales);
      alignas(32) uint8_t levels[kFiveBit<Block> ? kQK_K : 1];
      if constexpr (kFiveBit<Block>) FiveBitLevelsOfBlock(wb, levels);
      __m512i big_a = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        // Bytes 32g..32g+31: low nibbles are elements 64g.., high nibbles 64g + 32..; two
        // chains per sub-block so the vpdpbusd latency overlaps (integer adds are exact).
        __m512i lo0 = _mm512_setzero_si512(), lo1 = lo0, hi0 = lo0, hi1 = lo0;
#pragma GCC unroll 8
        for (int k = 0; k < 8; k += 2) {
          __m512i lo_v0, lo_v1, hi_v0, hi_v1;  // the levels, four per lane
          if constexpr (kFiveBit<Block>) {
            lo_v0 = _mm512_set1_epi32(Word(levels + 64 * g + 4 * k));
            lo_v1 = _mm512_set1_epi32(Word(levels + 64 * g + 4 * k + 4));
            hi_v0 = _mm512_set1_epi32(Word(levels + 64 * g + 32 + 4 * k));
            hi_v1 = _mm512_set1_epi32(Word(levels + 64 * g + 32 + 4 * k + 4));
          } else {
            const __m512i v0 = _mm512_set1_epi32(Word(wb.qs + 32 * g + 4 * k));
            const __m512i v1 = _mm512_set1_epi32(Word(wb.qs + 32 * g + 4 * k + 4));
            lo_v0 = _mm512_and_si512(v0, low);
            lo_v1 = _mm512_and_si512(v1, low);
            hi_v0 = _mm512_and_si512(_mm512_srli_epi16(v0, 4), low);
            hi_v1 = _mm512_and_si512(_mm512_srli_epi16(v1, 4), low);
          }
          lo0 = _mm512_dpbusd_epi32(lo0, lo_v0, _mm512_load_si512(pb.groups[16 * g + k]));
          lo1 = _mm512_dpbusd_epi32(lo1, lo_v1, _mm512_load_si512(pb.groups[16 * g + k + 1]));
          hi0 = _mm512_dpbusd_epi32(hi0, hi_v0, _mm512_load_si512(pb.groups[16 * g + 8 + k]));
          hi1 = _mm512_dpbusd_epi32(hi1, hi_v1, _mm512_load_si512(pb.groups[16 * g + 8 + k + 1]));
        }
        big_a = _mm512_add_epi32(
            big_a, _mm512_mullo_epi32(_mm512_add_epi32(lo0, lo1), _mm512_set1_epi32(Byte(sm.scales, 2 * g))));
        big_a = _mm512_add_epi32(
            big_a, _mm512_mullo_epi32(_mm512_add_epi32(hi0, hi1), _mm512_set1_epi32(Byte(sm.scales, 2 * g + 1))));
      }
      __m512i big_b = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const int32_t pair = Byte(sm.mins, 2 * k) | (Byte(sm.mins, 2 * k + 1) << 16);
        big_b = _mm512_dpwssd_epi32(big_b, _mm512_set1_epi32(pair), _mm512_load_si512(pb.sub_sums[k]));
      }
      a[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big_a), _mm512_mul_ps(_mm512_set1_ps(f16[wb.d]), dx), a[r]);
      b[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big_b), _mm512_mul_ps(_mm512_set1_ps(f16[wb.dmin]), dx), b[r]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) out[r] = _mm512_sub_ps(a[r], b[r]);
}

// The tile on prepared activations: out[c * out_stride + r] for r < n_rows, c < n_act.
template <class Block>
void VnniK4TileRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared, size_t /*act_stride*/,
                   int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  const auto* w = static_cast<const uint8_t*>(weight);
  const int64_t nb = n / kQK_K;
  const VnniK4PanelBlock* panels = AlignedPanelBlocks<VnniK4PanelBlock>(prepared);
  ForEachPanel(n_rows, n_act, out, out_stride, [&](auto rows, int64_t r, int64_t p, __m512* lanes) HWY_ATTR {
    VnniK4PanelT<Block, decltype(rows)::value>(w + r * row_stride, row_stride, panels + p * nb, nb, lanes);
  });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_K_INL_H_ toggle
