// The AVX512-VNNI path of the K-quants with 16-element sub-blocks, Q6_K, Q3_K and Q2_K
// (Highway target AVX3_DL), shared by the one-row kernel (dot_simd_k.cc) and the tile
// (dot_tile_k.cc); the design of vnni_k-inl.h (Q4_K). Q6_K is the other half of a Q4_K_M
// file (its LM head, attn_v and half of ffn_down); Q3_K and Q2_K make up the Q3_K_* and
// Q2_K files that fit the largest models into a small memory.
//
// vpdpbusd multiplies unsigned bytes by signed ones, so the levels are used as stored,
// q' = q + offset (Q6_K: 0..63, offset 32; Q3_K: low two bits + 4 * the hmask bit, 0..7,
// offset 4; Q2_K: 0..3, no offset), and the offset is taken out exactly with Q8_K's group
// sums (16 elements each, which are these formats' sub-blocks). Per super-block i, with the
// integer sub-block scales sc_s (Q6_K: int8; Q3_K: six bits - 32; Q2_K: four bits), the exact
//     A_i = sum_s sc_s * (sum of q' x over sub-block s) - offset * sum_s sc_s * bsum_s
// and p_i = fl(d_i * d_x,i), one chain over the super-blocks: a = fma(float(A_i), p_i, a).
// Q2_K also has a four-bit min m_s per sub-block: B_i = sum_s m_s * bsum_s and
// m_i = fl(dmin_i * d_x,i) run a second chain, b = fma(float(B_i), m_i, b), and the result
// is a - b, as Q4_K's. (|A_i| < 2^29; float(A_i) rounds above 2^24, the same way in both
// kernels.) The result is defined per output element, so dot and tile are bit-identical.
#if defined(SF_QUANT_VNNI_K16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_K16_INL_H_
#undef SF_QUANT_VNNI_K16_INL_H_
#else
#define SF_QUANT_VNNI_K16_INL_H_
#endif

#include "hwy/highway.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // used only in the AVX3_DL pass below
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

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

// Each format: its block, offset (a power of two, as a shift), whether it has mins, and
//   UnpackHalf(b, h, q): the 128 levels q' of half h in element order, 32 per vector;
//   Scales(b): the 16 sub-block scales as signed bytes, sub-block order;
//   Mins(b) (Q2_K): the 16 mins likewise.

// Q6_K: elements 32j..32j+31 of half h take the low (j = 0, 1) or high (j = 2, 3) nibbles
// of ql[64h + 32(j % 2) ..] and bits 2j, 2j + 1 of qh[32h ..] (ggml's layout).
struct VnniQ6K {
  using Block = BlockQ6_K;
  static constexpr int kOffsetShift = 5;  // offset 32
  static constexpr bool kMins = false;
  static HWY_INLINE void UnpackHalf(const Block& b, int h, __m256i* q) {
    const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h));
    const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
    const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(0x30);
    // Bits 2j, 2j + 1 of qh moved to bits 4-5 (16-bit shifts; the mask drops what crossed bytes).
    q[0] = _mm256_or_si256(_mm256_and_si256(ql0, low), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high));
    q[1] = _mm256_or_si256(_mm256_and_si256(ql1, low), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high));
    q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low), _mm256_and_si256(qh, high));
    q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low),
                           _mm256_and_si256(_mm256_srli_epi16(qh, 2), high));
  }
  static HWY_INLINE __m128i Scales(const Block& b) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
  }
};

// Q2_K and Q3_K: element 32k + l of half h (l < 32) is bits 2k, 2k + 1 of qs[32h + l].
HWY_INLINE __m256i TwoBitLevels(__m256i qs, int k) {
  return _mm256_and_si256(_mm256_srl_epi16(qs, _mm_cvtsi32_si128(2 * k)), _mm256_set1_epi8(0x03));
}

// Q3_K: plus 4 where bit 4h + k of hmask[l] is set (ggml subtracts 4 where it is not).
struct VnniQ3K {
  using Block = BlockQ3_K;
  static constexpr int kOffsetShift = 2;  // offset 4
  static constexpr bool kMins = false;
  static HWY_INLINE void UnpackHalf(const Block& b, int h, __m256i* q) {
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * h));
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.hmask));
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      // A 16-bit shift brings bit 4h + k of both bytes to their bit 0; the mask keeps it.
      const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(hm, _mm_cvtsi32_si128(4 * h + k)), _mm256_set1_epi8(0x01));
      q[k] = _mm256_or_si256(TwoBitLevels(qs, k), _mm256_slli_epi16(bit, 2));
    }
  }
  // 16 six-bit scales (layout: unpack_scale_q3_k), minus 32.
  static HWY_INLINE __m128i Scales(const Block& b) {
    uint64_t low, high;
    unpack_scales_q3_k_words(b.scales, &low, &high);
    return _mm_sub_epi8(_mm_set_epi64x(static_cast<int64_t>(high), static_cast<int64_t>(low)), _mm_set1_epi8(32));
  }
};

// Q2_K: scales[s] holds sub-block s's scale (low nibble) and min (high nibble).
struct VnniQ2K {
  using Block = BlockQ2_K;
  static constexpr int kOffsetShift = -1;  // no offset
  static constexpr bool kMins = true;
  static HWY_INLINE void UnpackHalf(const Block& b, int h, __m256i* q) {
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * h));
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) q[k] = TwoBitLevels(qs, k);
  }
  static HWY_INLINE __m128i Scales(const Block& b) {
    return _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), _mm_set1_epi8(0x0F));
  }
  static HWY_INLINE __m128i Mins(const Block& b) {
    return _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), 4),
                         _mm_set1_epi8(0x0F));
  }
};

// sum_s v_s * bsum_s over the 16 sub-blocks, v as signed bytes (exact).
HWY_INLINE int32_t BsumDot(__m128i v, const BlockQ8_K& x) {
  const __m256i prod =
      _mm256_madd_epi16(_mm256_cvtepi8_epi16(v), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
  return _mm512_reduce_add_epi32(_mm512_zextsi256_si512(prod));
}

// Super-blocks fetched ahead of the one in use (PrefetchBlockAhead): about 2.5 KB, the
// distance that Q6_K (12 blocks of 210 bytes) and Q4_K were tuned at.
template <class F>
inline constexpr int kK16PrefetchBlocks = static_cast<int>(2520 / sizeof(typename F::Block));

// One weight row x one Q8_K activation row, nb super-blocks.
template <class F>
HWY_INLINE float VnniK16Dot(const typename F::Block* w, const BlockQ8_K* x, int64_t nb) {
  const float* f16 = fp16_table();
  float a = 0.0f, b = 0.0f;
  // Sub-block order of the lanes after the two hadds below: [0, 2, 4, 6, 1, 3, 5, 7].
  const __m128i order = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  for (int64_t i = 0; i < nb; ++i) {
    const typename F::Block& wb = w[i];
    const BlockQ8_K& xb = x[i];
    PrefetchBlockAhead<kK16PrefetchBlocks<F>>(&wb);
    const __m128i raw_scales = F::Scales(wb);
    const __m128i scales = _mm_shuffle_epi8(raw_scales, order);
    __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      __m256i q[4], s[4];
      F::UnpackHalf(wb, h, q);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        s[j] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q[j],
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs + 128 * h + 32 * j)));
      // Lanes 0-3 of s[j] are sub-block 8h + 2j, lanes 4-7 sub-block 8h + 2j + 1: two hadds
      // leave one sum per sub-block, in the order of `order` (within each 128-bit half).
      const __m256i sums = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
      const __m256i sc = _mm256_cvtepi8_epi32(h == 0 ? scales : _mm_unpackhi_epi64(scales, scales));
      acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(sums, sc));
    }
    int32_t big_a = _mm512_reduce_add_epi32(_mm512_zextsi256_si512(acc));
    if constexpr (F::kOffsetShift >= 0) big_a -= BsumDot(raw_scales, xb) * (1 << F::kOffsetShift);
    a = __builtin_fmaf(static_cast<float>(big_a), f16[wb.d] * xb.d, a);
    if constexpr (F::kMins) b = __builtin_fmaf(static_cast<float>(BsumDot(F::Mins(wb), xb)), f16[wb.dmin] * xb.d, b);
  }
  return F::kMins ? a - b : a;
}

// ---- Small batches: one weight row x up to eight activation rows, as quantised. ----
//
// Below kVnniK*MinRows rows a panel (16 activation rows whatever the batch) costs more than
// it saves, and dot_rows once per activation row decodes every weight super-block once per
// activation row (at 4 rows 0.7x the AVX3 tile it replaced). This decodes the super-block
// once for up to eight rows and computes VnniK16Dot's values for each of them: the same exact
// integers A_i and B_i (summed in another order, still exact) and the same float chains, so
// every output is the float dot computes.

// The sums of the eight int32 lanes of v[0..C-1] (exact).
template <int C>
HWY_INLINE void LaneSums(const __m256i* v, int32_t* sums) {
  if constexpr (C > 0) {
    const __m256i z = _mm256_setzero_si256();
    // Lane k of the low half: v_k's lanes 0-3 summed; of the high half: its lanes 4-7.
    const __m256i t01 = _mm256_hadd_epi32(v[0], C > 1 ? v[1] : z);
    const __m256i t23 = _mm256_hadd_epi32(C > 2 ? v[2] : z, C > 3 ? v[3] : z);
    const __m256i t = _mm256_hadd_epi32(t01, t23);
    alignas(16) int32_t four[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(four),
                    _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)));
    for (int c = 0; c < (C < 4 ? C : 4); ++c) sums[c] = four[c];
    if constexpr (C > 4) LaneSums<C - 4>(v + 4, sums + 4);
  }
}

// Each dpbusd lane (four products of a level 0..63 and an int8 activation) is at most
// 63 * 128 * 4 = 32,256 in magnitude: an int16 in the lane's low half (the high half its sign).
// vpdpwssd against a lane holding the lane's sub-block scale in its low half and zero in the
// high one adds exactly lane * scale to the accumulator, so the per-activation work is two
// VNNI instructions per 32 levels, with no horizontal adds until the super-block's end.
// The scales of half h, pair j: sub-block 8h + 2j in lanes 0-3, 8h + 2j + 1 in lanes 4-7.
HWY_INLINE void LaneScales(__m128i raw_scales, __m256i* lanes) {
  const __m256i low16 = _mm256_set1_epi32(0xFFFF);
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    const char s0 = static_cast<char>(2 * k), s1 = static_cast<char>(2 * k + 1);
    const __m128i pick = _mm_setr_epi8(s0, s0, s0, s0, s1, s1, s1, s1, 0, 0, 0, 0, 0, 0, 0, 0);
    lanes[k] = _mm256_and_si256(_mm256_cvtepi8_epi32(_mm_shuffle_epi8(raw_scales, pick)), low16);
  }
}

// out[c] = VnniK16Dot(w, x[c], nb) for c < C.
template <class F, int C>
HWY_INLINE void VnniK16RowDots(const typename F::Block* w, const BlockQ8_K* const* x, int64_t nb, float* out) {
  const float* f16 = fp16_table();
  float a[C], b[C];
  for (int c = 0; c < C; ++c) a[c] = b[c] = 0.0f;
  for (int64_t i = 0; i < nb; ++i) {
    const typename F::Block& wb = w[i];
    PrefetchBlockAhead<kK16PrefetchBlocks<F>>(&wb);
    const __m128i raw_scales = F::Scales(wb);
    __m256i sc[8];
    LaneScales(raw_scales, sc);
    __m256i acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      F::UnpackHalf(wb, h, q);
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) {
        const int8_t* xq = x[c][i].qs + 128 * h;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q[j],
                                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32 * j)));
          acc[c] = _mm256_dpwssd_epi32(acc[c], s, sc[4 * h + j]);
        }
      }
    }
    // The offset's group-sum term and the mins', lane by lane before the lane sums.
    const __m256i scales16 = _mm256_cvtepi8_epi16(raw_scales);
    __m256i mins16 = _mm256_setzero_si256(), m[C];
    if constexpr (F::kMins) mins16 = _mm256_cvtepi8_epi16(F::Mins(wb));
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[c][i].bsums));
      if constexpr (F::kOffsetShift >= 0)
        acc[c] = _mm256_sub_epi32(acc[c], _mm256_slli_epi32(_mm256_madd_epi16(scales16, bsums), F::kOffsetShift));
      if constexpr (F::kMins) m[c] = _mm256_madd_epi16(mins16, bsums);
    }
    int32_t big_a[C], big_b[C];
    LaneSums<C>(acc, big_a);
    if constexpr (F::kMins) LaneSums<C>(m, big_b);
    const float d = f16[wb.d];
    for (int c = 0; c < C; ++c) {
      a[c] = __builtin_fmaf(static_cast<float>(big_a[c]), d * x[c][i].d, a[c]);
      if constexpr (F::kMins) b[c] = __builtin_fmaf(static_cast<float>(big_b[c]), f16[wb.dmin] * x[c][i].d, b[c]);
    }
  }
  for (int c = 0; c < C; ++c) out[c] = F::kMins ? a[c] - b[c] : a[c];
}

// C activation rows (row c at x + c * x_stride) against each of n_rows weight rows.
template <class F, int C>
HWY_INLINE void VnniK16SmallGroup(const uint8_t* w, size_t row_stride, int64_t n_rows, const uint8_t* x,
                                  size_t x_stride, int64_t nb, float* out, int64_t out_stride) {
  const BlockQ8_K* xr[C];
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const BlockQ8_K*>(x + c * x_stride);
  for (int64_t r = 0; r < n_rows; ++r) {
    float dots[C];
    VnniK16RowDots<F, C>(reinterpret_cast<const typename F::Block*>(w + r * row_stride), xr, nb, dots);
    for (int c = 0; c < C; ++c) out[c * out_stride + r] = dots[c];
  }
}

template <class F, size_t... C>
constexpr auto SmallGroups(std::index_sequence<C...>) {
  return std::array{&VnniK16SmallGroup<F, static_cast<int>(C) + 1>...};
}

// DotTile::small_run: the tile's interface on the quantised rows (no preparation), for the
// batches under the tile's minimum; any count of activation rows, eight at a time.
template <class F>
void VnniK16SmallRun(const void* weight, size_t row_stride, int64_t n_rows, const void* act, size_t act_stride,
                     int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  const auto* w = static_cast<const uint8_t*>(weight);
  const auto* x = static_cast<const uint8_t*>(act);
  const int64_t nb = n / kQK_K;
  // VnniK16SmallGroup<F, 1..8>, by group size.
  static constexpr auto kGroups = SmallGroups<F>(std::make_index_sequence<8>{});
  for (int64_t c = 0; c < n_act; c += 8) {
    const int64_t group = std::min<int64_t>(8, n_act - c);
    kGroups[group - 1](w, row_stride, n_rows, x + c * act_stride, act_stride, nb, out + c * out_stride, out_stride);
  }
}

// ---- The tile: 16 Q8_K activation rows per panel, prepared once per matmul. ----

// Per (panel, super-block): 64 vectors of four elements per lane (lane c: activation row c),
// the group sums as int16 pairs (vector k, lane c: bsums 2k and 2k + 1 of row c) for
// vpdpwssd with the scale (and min) pairs, and the rows' scales d_x. One layout for the
// three formats, so matmul's reuse of a shared input's preparation holds across them.
struct VnniK16PanelBlock {
  int8_t groups[64][64];
  int16_t bsum_pairs[8][2 * kPanel];
  float scale[kPanel];
};

inline size_t VnniK16PreparedBytes(int64_t n_act, int64_t n) {
  return PreparedPanelBytes(n_act, n / kQK_K, sizeof(VnniK16PanelBlock));
}

inline void VnniK16Prepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  PreparePanels<VnniK16PanelBlock, BlockQ8_K>(act, act_stride, n_act, n / kQK_K, prepared,
                                              [](VnniK16PanelBlock& pb, int c, const BlockQ8_K& xb) {
                                                for (int e = 0; e < 64; ++e)
                                                  std::memcpy(&pb.groups[e][4 * c], xb.qs + 4 * e, 4);
                                                for (int k = 0; k < 8; ++k) {
                                                  pb.bsum_pairs[k][2 * c] = xb.bsums[2 * k];
                                                  pb.bsum_pairs[k][2 * c + 1] = xb.bsums[2 * k + 1];
                                                }
                                                pb.scale[c] = xb.d;
                                              });
}

// sum_s v_s * bsum_s for the panel's 16 activation rows (lane c: row c), v as signed bytes.
HWY_INLINE __m512i PanelBsumDot(const int8_t* v, const VnniK16PanelBlock& pb) {
  __m512i sum = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    // v_2k in the low int16, v_2k+1 in the high one (two's complement).
    const uint32_t lo = static_cast<uint16_t>(v[2 * k]), hi = static_cast<uint16_t>(v[2 * k + 1]);
    const auto pair = static_cast<int32_t>(lo | (hi << 16));
    sum = _mm512_dpwssd_epi32(sum, _mm512_set1_epi32(pair), _mm512_load_si512(pb.bsum_pairs[k]));
  }
  return sum;
}

// R weight rows x one panel: out[r] lane c = weight row r with activation row c.
template <class F, int R>
HWY_INLINE void VnniK16PanelT(const uint8_t* w, size_t stride, const VnniK16PanelBlock* panel, int64_t nb,
                              __m512* out) {
  const float* f16 = fp16_table();
  __m512 a[R], b[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) a[r] = b[r] = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const VnniK16PanelBlock& pb = panel[i];
    const __m512 dx = _mm512_load_ps(pb.scale);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const typename F::Block& wb = reinterpret_cast<const typename F::Block*>(w + r * stride)[i];
      PrefetchBlockAhead<kK16PrefetchBlocks<F>>(&wb);
      // The levels in element order, so that four consecutive ones are one broadcast word.
      HWY_ALIGN uint8_t levels[256];
      for (int h = 0; h < 2; ++h) {
        __m256i q[4];
        F::UnpackHalf(wb, h, q);
        for (int j = 0; j < 4; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(levels + 128 * h + 32 * j), q[j]);
      }
      // Q6_K's scales are the block's own bytes; the others' are unpacked to the stack.
      alignas(16) int8_t unpacked[16];
      const int8_t* scales = unpacked;
      if constexpr (std::is_same_v<F, VnniQ6K>)
        scales = wb.scales;
      else
        _mm_store_si128(reinterpret_cast<__m128i*>(unpacked), F::Scales(wb));
      __m512i big_a = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int s = 0; s < 16; ++s) {
        // Sub-block s: elements 16s..16s+15, four groups of four; two chains so the
        // vpdpbusd latency overlaps (integer adds are exact).
        int32_t w0, w1, w2, w3;
        std::memcpy(&w0, levels + 16 * s, 4);
        std::memcpy(&w1, levels + 16 * s + 4, 4);
        std::memcpy(&w2, levels + 16 * s + 8, 4);
        std::memcpy(&w3, levels + 16 * s + 12, 4);
        __m512i s0 =
            _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi32(w0), _mm512_load_si512(pb.groups[4 * s]));
        __m512i s1 =
            _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi32(w1), _mm512_load_si512(pb.groups[4 * s + 1]));
        s0 = _mm512_dpbusd_epi32(s0, _mm512_set1_epi32(w2), _mm512_load_si512(pb.groups[4 * s + 2]));
        s1 = _mm512_dpbusd_epi32(s1, _mm512_set1_epi32(w3), _mm512_load_si512(pb.groups[4 * s + 3]));
        big_a = _mm512_add_epi32(big_a, _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), _mm512_set1_epi32(scales[s])));
      }
      if constexpr (F::kOffsetShift >= 0)
        big_a = _mm512_sub_epi32(big_a, _mm512_slli_epi32(PanelBsumDot(scales, pb), F::kOffsetShift));
      a[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big_a), _mm512_mul_ps(_mm512_set1_ps(f16[wb.d]), dx), a[r]);
      if constexpr (F::kMins) {
        alignas(16) int8_t mins[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(mins), F::Mins(wb));
        b[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(PanelBsumDot(mins, pb)),
                               _mm512_mul_ps(_mm512_set1_ps(f16[wb.dmin]), dx), b[r]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) out[r] = F::kMins ? _mm512_sub_ps(a[r], b[r]) : a[r];
}

// A panel costs the same for 1 to 16 activation rows (quant_dot_bench --batch, K = 2048, 512
// rows, one thread: 167-176 us per Q6_K, Q3_K or Q2_K panel), while the small-batch kernel
// above costs ~15-18 us per activation row (Q6_K 68 us at 4 rows, 149 at 9, 160 at 10;
// Q3_K 71, 161, 168; Q2_K 70, 162, 175), so batches under these sizes take the small-batch
// kernel (both bit-identical to dot).
inline constexpr int64_t kVnniK6MinRows = 11;
inline constexpr int64_t kVnniK3MinRows = 10;
inline constexpr int64_t kVnniK2MinRows = 10;

// The tile on prepared activations: out[c * out_stride + r] for r < n_rows, c < n_act.
template <class F>
void VnniK16TileRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared, size_t /*act_stride*/,
                    int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  const auto* w = static_cast<const uint8_t*>(weight);
  const int64_t nb = n / kQK_K;
  const VnniK16PanelBlock* panels = AlignedPanelBlocks<VnniK16PanelBlock>(prepared);
  ForEachPanel(n_rows, n_act, out, out_stride, [&](auto rows, int64_t r, int64_t p, __m512* lanes) HWY_ATTR {
    VnniK16PanelT<F, decltype(rows)::value>(w + r * row_stride, row_stride, panels + p * nb, nb, lanes);
  });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_K16_INL_H_ toggle
