// The AVX512-VNNI path of the Q6_K kernels (Highway target AVX3_DL), shared by the one-row
// kernel (dot_simd_k.cc) and the tile (dot_tile_k.cc); the design of vnni_k-inl.h (Q4_K).
// Q6_K is the other half of a Q4_K_M file (its LM head, attn_v and half of ffn_down).
//
// vpdpbusd multiplies unsigned bytes by signed ones, so the six-bit levels are used as
// stored, q' = q + 32 in 0..63, and the offset is taken out exactly with Q8_K's group sums
// (16 elements each, which are Q6_K's sub-blocks). Per super-block i, the exact integer
//     A_i = sum_s scale_s * (sum of q' x over sub-block s) - 32 * sum_s scale_s * bsum_s
// and p_i = fl(d_i * d_x,i), one chain over the super-blocks: a = fma(float(A_i), p_i, a).
// (|A_i| < 2^29; float(A_i) rounds above 2^24, the same way in both kernels.) The result is
// defined per output element, so dot and tile are bit-identical.
#if defined(SF_QUANT_VNNI_K6_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_K6_INL_H_
#undef SF_QUANT_VNNI_K6_INL_H_
#else
#define SF_QUANT_VNNI_K6_INL_H_
#endif

#include "hwy/highway.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // used only in the AVX3_DL pass below
#endif

#include <cstring>

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

// The 128 levels q' of half h of a Q6_K super-block, in element order (32 per vector):
// elements 32j..32j+31 of the half take the low (j = 0, 1) or high (j = 2, 3) nibbles of
// ql[64h + 32(j % 2) ..] and bits 2j, 2j + 1 of qh[32h ..] (ggml's layout).
HWY_INLINE void UnpackK6Half(const BlockQ6_K& b, int h, __m256i* q) {
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

// sum_s scale_s * bsum_s over the 16 sub-blocks (exact).
HWY_INLINE int32_t K6OffsetDot(const BlockQ6_K& b, const BlockQ8_K& x) {
  const __m256i scales = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
  const __m256i prod = _mm256_madd_epi16(scales, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
  return _mm512_reduce_add_epi32(_mm512_zextsi256_si512(prod));
}

// Super-blocks (210 bytes each) fetched ahead of the one in use (PrefetchBlockAhead; about
// the distance in bytes of Q4_K's kK4PrefetchBlocks).
inline constexpr int kK6PrefetchBlocks = 12;

// One Q6_K weight row x one Q8_K activation row, nb super-blocks.
HWY_INLINE float VnniK6Dot(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
  const float* f16 = fp16_table();
  float a = 0.0f;
  // Sub-block order of the lanes after the two hadds below: [0, 2, 4, 6, 1, 3, 5, 7].
  const __m128i order = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ6_K& wb = w[i];
    const BlockQ8_K& xb = x[i];
    PrefetchBlockAhead<kK6PrefetchBlocks>(&wb);
    const __m128i scales = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb.scales)), order);
    __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      __m256i q[4], s[4];
      UnpackK6Half(wb, h, q);
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
    const int32_t big_a = _mm512_reduce_add_epi32(_mm512_zextsi256_si512(acc)) - 32 * K6OffsetDot(wb, xb);
    a = __builtin_fmaf(static_cast<float>(big_a), f16[wb.d] * xb.d, a);
  }
  return a;
}

// ---- The tile: 16 Q8_K activation rows per panel, prepared once per matmul. ----

// Per (panel, super-block): 64 vectors of four elements per lane (lane c: activation row c),
// the group sums as int16 pairs (vector k, lane c: bsums 2k and 2k + 1 of row c) for
// vpdpwssd with the scale pairs, and the rows' scales d_x.
struct VnniK6PanelBlock {
  int8_t groups[64][64];
  int16_t bsum_pairs[8][2 * kPanel];
  float scale[kPanel];
};

inline size_t VnniK6PreparedBytes(int64_t n_act, int64_t n) {
  return PreparedPanelBytes(n_act, n / kQK_K, sizeof(VnniK6PanelBlock));
}

inline void VnniK6Prepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  PreparePanels<VnniK6PanelBlock, BlockQ8_K>(act, act_stride, n_act, n / kQK_K, prepared,
                                             [](VnniK6PanelBlock& pb, int c, const BlockQ8_K& xb) {
                                               for (int e = 0; e < 64; ++e)
                                                 std::memcpy(&pb.groups[e][4 * c], xb.qs + 4 * e, 4);
                                               for (int k = 0; k < 8; ++k) {
                                                 pb.bsum_pairs[k][2 * c] = xb.bsums[2 * k];
                                                 pb.bsum_pairs[k][2 * c + 1] = xb.bsums[2 * k + 1];
                                               }
                                               pb.scale[c] = xb.d;
                                             });
}

// R weight rows x one panel: out[r] lane c = weight row r with activation row c.
template <int R>
HWY_INLINE void VnniK6PanelT(const uint8_t* w, size_t stride, const VnniK6PanelBlock* panel, int64_t nb, __m512* out) {
  const float* f16 = fp16_table();
  __m512 a[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) a[r] = _mm512_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const VnniK6PanelBlock& pb = panel[i];
    const __m512 dx = _mm512_load_ps(pb.scale);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const BlockQ6_K& wb = reinterpret_cast<const BlockQ6_K*>(w + r * stride)[i];
      PrefetchBlockAhead<kK6PrefetchBlocks>(&wb);
      // The levels in element order, so that four consecutive ones are one broadcast word.
      HWY_ALIGN uint8_t levels[256];
      for (int h = 0; h < 2; ++h) {
        __m256i q[4];
        UnpackK6Half(wb, h, q);
        for (int j = 0; j < 4; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(levels + 128 * h + 32 * j), q[j]);
      }
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
        big_a = _mm512_add_epi32(big_a, _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), _mm512_set1_epi32(wb.scales[s])));
      }
      __m512i offset = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        // scale_2k in the low int16, scale_2k+1 in the high one (two's complement).
        const uint32_t lo = static_cast<uint16_t>(wb.scales[2 * k]), hi = static_cast<uint16_t>(wb.scales[2 * k + 1]);
        const auto pair = static_cast<int32_t>(lo | (hi << 16));
        offset = _mm512_dpwssd_epi32(offset, _mm512_set1_epi32(pair), _mm512_load_si512(pb.bsum_pairs[k]));
      }
      big_a = _mm512_sub_epi32(big_a, _mm512_slli_epi32(offset, 5));  // - 32 * offset
      a[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(big_a), _mm512_mul_ps(_mm512_set1_ps(f16[wb.d]), dx), a[r]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) out[r] = a[r];
}

// A Q6_K panel costs about as much as six one-row dots (quant_dot_bench --batch, K = 2048,
// 512 rows: 168-175 us per panel of up to 16 rows against ~28 us per row of dot_rows), so
// smaller batches use dot_rows (bit-identical).
inline constexpr int64_t kVnniK6MinRows = 6;

// The tile on prepared activations: out[c * out_stride + r] for r < n_rows, c < n_act.
inline void VnniK6TileRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared,
                          size_t /*act_stride*/, int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  const auto* w = static_cast<const uint8_t*>(weight);
  const int64_t nb = n / kQK_K;
  const VnniK6PanelBlock* panels = AlignedPanelBlocks<VnniK6PanelBlock>(prepared);
  ForEachPanel(n_rows, n_act, out, out_stride, [&](auto rows, int64_t r, int64_t p, __m512* lanes) HWY_ATTR {
    VnniK6PanelT<decltype(rows)::value>(w + r * row_stride, row_stride, panels + p * nb, nb, lanes);
  });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_K6_INL_H_ toggle
