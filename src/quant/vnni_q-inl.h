// The AVX512-VNNI path of the Q4_0, Q5_0 and Q8_0 kernels (Q8_0 activations) and of the
// Q4_1 and Q5_1 kernels (Q8_1 activations) (Highway target AVX3_DL: Ice Lake, Zen 4 and
// later), shared by the one-activation-row kernels (dot_simd_q.cc) and the tile kernels
// (dot_tile_q.cc).
//
// vpdpbusd multiplies 64 unsigned bytes by 64 signed bytes and adds each group of four
// products into an int32 lane. The tile puts one ACTIVATION ROW in each of the 16 lanes:
// the activations of 16 rows are interleaved once per matmul (VnniPrepare), four bytes of a
// weight row are broadcast to every lane, and eight vpdpbusd give a whole 32-element block's
// integer dot for 16 activation rows at once, converted and scaled with three vector ops.
// That is what makes prefill and tree verification compute-efficient: the int16 path spends
// four ops per block per (weight row, activation row) on the float side alone.
//
// Bit-identity between batch sizes is kept by defining the result per output element, so
// any vector width or loop order gives the same float. With isum_b the exact integer dot of
// block b and p_b = fl(d_w,b * d_x,b), block b goes to chain (b / 2) mod 4, in order:
//     chain_j = +0; for b in chain j, ascending: chain_j = fma(float(isum_b), p_b, chain_j)
// and the result is ChainSum's fixed tree over the 4 chains. (The chains are what ReducePairs'
// lane order makes cheap in the one-row kernels: each 128-bit quarter of a 16-block segment
// holds one block of every chain, in ascending order.) A chain is never -0 (it starts at +0,
// and an fma gives -0 only onto -0), so adding a zero product leaves it unchanged: kernels
// may run blocks past the end as zeros. The one-row kernels hold a row's chains in the lanes
// of one 128-bit vector; the tile holds 4 chain vectors per weight row whose lanes are
// activation rows. (This target's floats differ from AVX3's in the last bits: a different
// but fixed summation order.)
//
// One operand of vpdpbusd must be unsigned:
//   Q4_0: the nibbles q (0..15) are the unsigned side: sum (q - 8) x = sum q x - 8 sum x;
//   Q5_0: the same with the fifth bit from qh: q in 0..31, sum (q - 16) x;
//   Q8_0: w + 128 is the unsigned side:               sum w x = sum (w + 128) x - 128 sum x;
//   Q4_1, Q5_1: the levels q (0..15, 0..31) already are: no correction (kBiasFactor 0).
// Otherwise the correction is a multiple of the activation block's sum, computed once per
// activation block and used as the accumulator's start value. Every partial sum is an exact
// int32 (|isum| <= 32 * 255 * 128 < 2^24, so float(isum) is exact too).
//
// Q4_1 and Q5_1 add m_w,b * s_x,b per block (the weight offset against the Q8_1 block's
// stored d_x * sum x, an fp16 like the reference uses). As in dot_simd_q.cc these terms go to
// accumulators of their own, here four more chains with the same blocks in the same order:
//     mchain_j = +0; for b in chain j, ascending: mchain_j = fma(m_w,b, s_x,b, mchain_j)
// and the result is ChainSum(chains) + ChainSum(mchains). (Like the chains, an mchain is never
// -0, so blocks past the end may run as zeros here too.)
#if defined(SF_QUANT_VNNI_Q_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_Q_INL_H_
#undef SF_QUANT_VNNI_Q_INL_H_
#else
#define SF_QUANT_VNNI_Q_INL_H_
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
#include "quant/legacy_traits-inl.h"
#include "quant/simd_common-inl.h"
#include "quant/vnni_panels-inl.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
// Highway 1.0.3's AVX3_DL target string enables the VEX "avxvnni" but not the EVEX
// "avx512vnni" that the 512-bit vpdpbusd needs; every CPU of this target has it.
#pragma GCC target("avx512vnni")
#endif
// GCC 12.2 reports the AVX-512 intrinsics' internal placeholder operands as maybe
// uninitialised (GCC bug 105593, fixed in later releases).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL

// The formats with a VNNI path, by their legacy_traits-inl.h traits. Callers test kVnni<T>
// with `if constexpr` inside `#if HWY_TARGET == HWY_AVX3_DL`.
template <class T>
struct VnniFormat {
  static constexpr bool kAvailable = false;
};
// kHasMin: the weight block has an offset m and the activations are Q8_1, whose stored
// s = d_x * sum x gives the m_w * s_x term (the mchains above).
template <class B, class XB, int kBias>
struct VnniFormatOf {
  static constexpr bool kAvailable = true;
  using Block = B;
  using XBlock = XB;
  static constexpr int kBiasFactor = kBias;
  static constexpr bool kHasMin = std::is_same_v<XB, BlockQ8_1>;
};
template <>
struct VnniFormat<Q4_0Traits> : VnniFormatOf<BlockQ4_0, BlockQ8_0, -8> {};
template <>
struct VnniFormat<Q5_0Traits> : VnniFormatOf<BlockQ5_0, BlockQ8_0, -16> {};
template <>
struct VnniFormat<Q8_0Traits> : VnniFormatOf<BlockQ8_0, BlockQ8_0, -128> {};
template <>
struct VnniFormat<Q4_1Traits> : VnniFormatOf<BlockQ4_1, BlockQ8_1, 0> {};
template <>
struct VnniFormat<Q5_1Traits> : VnniFormatOf<BlockQ5_1, BlockQ8_1, 0> {};
template <class T>
inline constexpr bool kVnni = VnniFormat<T>::kAvailable;

// ---- The one-activation-row kernels: blocks in pairs, 16 blocks per chain segment. ----

// Two 32-byte runs into one vector; a missing odd block is zeros (adds exactly 0).
HWY_INLINE __m512i LoadPair32(const int8_t* even, const int8_t* odd) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(even));
  const __m256i hi = odd ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(odd)) : _mm256_setzero_si256();
  return _mm512_inserti64x4(_mm512_zextsi256_si512(lo), hi, 1);
}

// An activation block pair as the signed operand, with the bias as start value (not written
// for the formats without one: see PairStart).
template <class F>
HWY_INLINE void PrepareActPair(const typename F::XBlock* x0, const typename F::XBlock* x1, __m512i* x, __m512i* bias) {
  *x = LoadPair32(x0->qs, x1 ? x1->qs : nullptr);
  if constexpr (F::kBiasFactor == 0) return;
  const __m512i sum =
      _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(static_cast<char>(-F::kBiasFactor)), *x);
  *bias = _mm512_sub_epi32(_mm512_setzero_si512(), sum);
}

// The start value of pair k's vpdpbusd. Zero, not a zeroed bias array, for the formats
// without a bias: GCC turns a loop that zeroes bias[0..pairs) into a memset (`rep stos`),
// which made Q4_1's one-row dot 1.5x slower on the AMD EPYC this was measured on.
template <class F>
HWY_INLINE __m512i PairStart(const __m512i* bias, int k) {
  if constexpr (F::kBiasFactor == 0) return _mm512_setzero_si512();
  return bias[k];
}

// A weight block pair as the unsigned operand. Q4_0 blocks hold elements j (low nibble) and
// j + 16 (high) in byte j, so [qs0, qs0, qs1, qs1] with the high nibbles shifted down in the
// 2nd and 4th 128-bit lanes lines up with the two blocks' 32 activation bytes each. (Q4_1's,
// Q5_0's and Q5_1's qs are laid out the same way.)
HWY_INLINE __m512i PairNibbles(const uint8_t* qs0, const uint8_t* qs1) {
  const __m256i q0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs0)));
  const __m256i q1 = qs1 ? _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs1)))
                         : _mm256_setzero_si256();
  const __m512i both = _mm512_inserti64x4(_mm512_zextsi256_si512(q0), q1, 1);
  const __m512i shift = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0);
  return _mm512_and_si512(_mm512_srlv_epi64(both, shift), _mm512_set1_epi8(0x0F));
}
template <class B>
HWY_INLINE __m512i NibblePairBytes(const B* b0, const B* b1) {
  return PairNibbles(b0->qs, b1 ? b1->qs : nullptr);
}
HWY_INLINE __m512i WeightPairBytes(const BlockQ4_0* b0, const BlockQ4_0* b1) { return NibblePairBytes(b0, b1); }
HWY_INLINE __m512i WeightPairBytes(const BlockQ4_1* b0, const BlockQ4_1* b1) { return NibblePairBytes(b0, b1); }
// Q5_0 as Q4_0, plus 16 on the bytes whose fifth bit is set: bit j of qh is element j, which
// sits in byte j of the block's 32 (low nibbles 0..15, then high nibbles 16..31), so the two
// blocks' qh words side by side are the byte mask of the pair. (Q5_1: the same qh.)
template <class B>
HWY_INLINE uint32_t FifthBits(const B& b) {
  uint32_t bits;
  std::memcpy(&bits, b.qh, 4);
  return bits;
}
template <class B>
HWY_INLINE __m512i FiveBitPairBytes(const B* b0, const B* b1) {
  const __m512i q = NibblePairBytes(b0, b1);
  const uint64_t fifth = FifthBits(*b0) | (b1 ? uint64_t{FifthBits(*b1)} << 32 : 0);
  return _mm512_mask_add_epi8(q, _cvtu64_mask64(fifth), q, _mm512_set1_epi8(16));
}
HWY_INLINE __m512i WeightPairBytes(const BlockQ5_0* b0, const BlockQ5_0* b1) { return FiveBitPairBytes(b0, b1); }
HWY_INLINE __m512i WeightPairBytes(const BlockQ5_1* b0, const BlockQ5_1* b1) { return FiveBitPairBytes(b0, b1); }
HWY_INLINE __m512i WeightPairBytes(const BlockQ8_0* b0, const BlockQ8_0* b1) {
  return _mm512_xor_si512(LoadPair32(b0->qs, b1 ? b1->qs : nullptr), _mm512_set1_epi8(static_cast<char>(0x80)));
}

// Eight pair sums s[k] (lanes 0-7: block 2k, lanes 8-15: block 2k + 1) to one vector of the
// 16 blocks' totals, in the lane order of BlockOfLane(). Integer adds: exact in any order.
HWY_INLINE __m512i ReducePairs(const __m512i* s) {
  __m512i a[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k)  // per 128-bit lane: s[2k] and s[2k+1] folded to two lanes each
    a[k] =
        _mm512_add_epi32(_mm512_unpacklo_epi32(s[2 * k], s[2 * k + 1]), _mm512_unpackhi_epi32(s[2 * k], s[2 * k + 1]));
  // per 128-bit lane L: the sums of s[0..3] (b0) and s[4..7] (b1) over that lane
  const __m512i b0 = _mm512_add_epi32(_mm512_unpacklo_epi64(a[0], a[1]), _mm512_unpackhi_epi64(a[0], a[1]));
  const __m512i b1 = _mm512_add_epi32(_mm512_unpacklo_epi64(a[2], a[3]), _mm512_unpackhi_epi64(a[2], a[3]));
  // A block spans 128-bit lanes 2h and 2h + 1 of its pair: add them. Result lanes, by
  // 128-bit lane: [blocks 0 2 4 6] [1 3 5 7] [8 10 12 14] [9 11 13 15].
  const __m512i even = _mm512_shuffle_i32x4(b0, b1, _MM_SHUFFLE(2, 0, 2, 0));
  const __m512i odd = _mm512_shuffle_i32x4(b0, b1, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm512_add_epi32(even, odd);
}

// The 4 chains' sum in a fixed tree: (chain 0 + chain 2) + (chain 1 + chain 3); the tile
// adds its chain vectors in the same tree, lane by lane.
HWY_INLINE float ChainSum(__m128 chains) {
  const __m128 t = _mm_add_ps(chains, _mm_movehl_ps(chains, chains));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// ChainSum's tree lane by lane, for the panel kernels that keep each chain in a vector.
HWY_INLINE __m512 LaneChainSum(__m512 c0, __m512 c1, __m512 c2, __m512 c3) {
  return _mm512_add_ps(_mm512_add_ps(c0, c2), _mm512_add_ps(c1, c3));
}

// The block of each lane of ReducePairs' result, and the lanes that hold one of `count`.
HWY_INLINE __m512i BlockOfLane() { return _mm512_set_epi32(15, 13, 11, 9, 14, 12, 10, 8, 7, 5, 3, 1, 6, 4, 2, 0); }

// The first four bytes of a segment's blocks (block_bytes apart), in ReducePairs' lane
// order; lanes outside `live` are 0.
HWY_INLINE __m512i SegmentWords(const void* first, int block_bytes, __mmask16 live) {
  const __m512i offsets = _mm512_mullo_epi32(BlockOfLane(), _mm512_set1_epi32(block_bytes));
  return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, offsets, first, 1);
}
// The fp16 in the low or high half of each word as floats (the block's d, and m or s);
// f16 -> f32 is exact, as fp16_table.
HWY_INLINE __m512 LowHalves(__m512i words) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words)); }
HWY_INLINE __m512 HighHalves(__m512i words) { return LowHalves(_mm512_srli_epi32(words, 16)); }

// R weight rows x one activation row, n / 32 blocks: out[r]. With prefetch set, the R rows
// after these are fetched as one sequential stream spread over the blocks.
template <class F, int R>
HWY_INLINE void VnniDotRowsT(const uint8_t* w, size_t stride, const typename F::XBlock* x, int64_t nb, float* out,
                             bool prefetch) {
  using Block = typename F::Block;
  using XBlock = typename F::XBlock;
  __m128 chains[R], mchains[R];  // lane j: chain j, mchain j (Q4_1/Q5_1 only)
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) chains[r] = mchains[r] = _mm_setzero_ps();
  for (int64_t b0 = 0; b0 < nb; b0 += 16) {
    const int count = static_cast<int>(std::min<int64_t>(16, nb - b0));
    const int pairs = (count + 1) / 2;
    const __mmask16 live = _mm512_cmplt_epi32_mask(BlockOfLane(), _mm512_set1_epi32(count));
    // The activation pairs and scales of this segment, shared by the R rows.
    __m512i xv[8], bias[8];
    for (int k = 0; k < pairs; ++k) {
      const int64_t ib = b0 + 2 * k;
      if (prefetch) {
        constexpr size_t kStep = R * 2 * sizeof(Block);
        const uint8_t* p = w + R * stride + static_cast<size_t>(ib / 2) * kStep;
        for (size_t o = 0; o < kStep; o += 64) hwy::Prefetch(p + o);
      }
      PrepareActPair<F>(x + ib, ib + 1 < nb ? x + ib + 1 : nullptr, &xv[k], &bias[k]);
    }
    // d_x, and for Q8_1 s_x: the two fp16 at the start of the block, one gather.
    const __m512i x_words = SegmentWords(x + b0, sizeof(XBlock), live);
    const __m512 dx = LowHalves(x_words);
    [[maybe_unused]] __m512 sx;
    if constexpr (F::kHasMin) sx = HighHalves(x_words);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Block* b = reinterpret_cast<const Block*>(w + r * stride) + b0;
      __m512i s[8];
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k)
        s[k] = k < pairs
                   ? _mm512_dpbusd_epi32(PairStart<F>(bias, k),
                                         WeightPairBytes(b + 2 * k, 2 * k + 1 < count ? b + 2 * k + 1 : nullptr), xv[k])
                   : _mm512_setzero_si512();
      // Lanes of missing blocks hold 0 * 0: no change to their chains. Quarter q holds
      // blocks {0 2 4 6} {1 3 5 7} {8 10 12 14} {9 11 13 15}: one per chain, ascending.
      // (Q4_1/Q5_1: d_w and m_w are likewise the block's first four bytes.)
      const __m512i w_words = SegmentWords(b, sizeof(Block), live);
      const __m512 p = _mm512_mul_ps(LowHalves(w_words), dx);
      const __m512 f = _mm512_cvtepi32_ps(ReducePairs(s));
      chains[r] = _mm_fmadd_ps(_mm512_castps512_ps128(f), _mm512_castps512_ps128(p), chains[r]);
      chains[r] = _mm_fmadd_ps(_mm512_extractf32x4_ps(f, 1), _mm512_extractf32x4_ps(p, 1), chains[r]);
      chains[r] = _mm_fmadd_ps(_mm512_extractf32x4_ps(f, 2), _mm512_extractf32x4_ps(p, 2), chains[r]);
      chains[r] = _mm_fmadd_ps(_mm512_extractf32x4_ps(f, 3), _mm512_extractf32x4_ps(p, 3), chains[r]);
      if constexpr (F::kHasMin) {
        // The mchains: independent of the chains, so the two latency chains overlap.
        const __m512 mw = HighHalves(w_words);
        mchains[r] = _mm_fmadd_ps(_mm512_castps512_ps128(mw), _mm512_castps512_ps128(sx), mchains[r]);
        mchains[r] = _mm_fmadd_ps(_mm512_extractf32x4_ps(mw, 1), _mm512_extractf32x4_ps(sx, 1), mchains[r]);
        mchains[r] = _mm_fmadd_ps(_mm512_extractf32x4_ps(mw, 2), _mm512_extractf32x4_ps(sx, 2), mchains[r]);
        mchains[r] = _mm_fmadd_ps(_mm512_extractf32x4_ps(mw, 3), _mm512_extractf32x4_ps(sx, 3), mchains[r]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    out[r] = ChainSum(chains[r]);
    if constexpr (F::kHasMin) out[r] += ChainSum(mchains[r]);
  }
}

// ---- The tile: 16 activation rows per vector (a panel), activations prepared once. ----

// Per (panel, block): eight vectors of 64 bytes (group g: lane c holds activation row c's
// elements 4g..4g+3), the 16 rows' bias (kBiasFactor * sum x) and their scales d_x. The
// formats with a minimum have no bias but need the rows' s_x (Q8_1's d_x * sum x) there.
struct VnniPanelBlock {
  int8_t groups[8][64];
  union {
    int32_t bias[kPanel];     // Q4_0, Q5_0, Q8_0
    float sum_scale[kPanel];  // Q4_1, Q5_1
  };
  float scale[kPanel];
};

inline size_t VnniPreparedBytes(int64_t n_act, int64_t n) {
  return PreparedPanelBytes(n_act, n / kQK, sizeof(VnniPanelBlock));
}

// Interleaves n_act Q8_0 (Q8_1) activation rows (act_stride bytes apart) into panels.
template <class F>
void VnniPrepare(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) {
  using XBlock = typename F::XBlock;
  const float* f16 = fp16_table();
  PreparePanels<VnniPanelBlock, XBlock>(act, act_stride, n_act, n / kQK, prepared,
                                        [f16](VnniPanelBlock& pb, int c, const XBlock& xb) {
                                          for (int g = 0; g < 8; ++g)
                                            std::memcpy(&pb.groups[g][4 * c], xb.qs + 4 * g, 4);
                                          if constexpr (F::kHasMin) {
                                            pb.sum_scale[c] = f16[xb.s];
                                          } else {
                                            int32_t sum = 0;
                                            for (int e = 0; e < kQK; ++e) sum += xb.qs[e];
                                            pb.bias[c] = F::kBiasFactor * sum;
                                          }
                                          pb.scale[c] = f16[xb.d];
                                        });
}

// The weight block's eight groups of four bytes, each broadcast to all lanes, as the
// unsigned operand.
template <class B>
HWY_INLINE void BroadcastNibbleGroups(const B& b, __m512i* g) {
  const __m512i low = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    int32_t word;
    std::memcpy(&word, b.qs + 4 * k, 4);
    const __m512i v = _mm512_set1_epi32(word);
    g[k] = _mm512_and_si512(v, low);                            // elements 4k..4k+3
    g[k + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);  // elements 16+4k..16+4k+3
  }
}
HWY_INLINE void BroadcastGroups(const BlockQ4_0& b, __m512i* g) { BroadcastNibbleGroups(b, g); }
HWY_INLINE void BroadcastGroups(const BlockQ4_1& b, __m512i* g) { BroadcastNibbleGroups(b, g); }
// Q5_0 and Q5_1: the block's 32 levels made once in a 256-bit vector (low nibbles, then
// high, with the fifth bits added under qh's byte mask), then broadcast four bytes at a time
// by vpermd from the register. (Storing the vector and broadcasting its words back from
// memory made the whole tile ~1.2x slower: 52 against 43 us for Q5_1, K = 2048, 256 rows x
// 4 activation rows, and the same for Q5_0.)
template <class B>
HWY_INLINE void BroadcastFiveBitGroups(const B& b, __m512i* g) {
  const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m256i nibbles = _mm256_and_si256(
      _mm256_inserti128_si256(_mm256_castsi128_si256(qs), _mm_srli_epi16(qs, 4), 1), _mm256_set1_epi8(0x0F));
  const __m256i levels = _mm256_mask_add_epi8(nibbles, _cvtu32_mask32(FifthBits(b)), nibbles, _mm256_set1_epi8(16));
  const __m512i lv = _mm512_castsi256_si512(levels);
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) g[k] = _mm512_permutexvar_epi32(_mm512_set1_epi32(k), lv);
}
HWY_INLINE void BroadcastGroups(const BlockQ5_0& b, __m512i* g) { BroadcastFiveBitGroups(b, g); }
HWY_INLINE void BroadcastGroups(const BlockQ5_1& b, __m512i* g) { BroadcastFiveBitGroups(b, g); }
HWY_INLINE void BroadcastGroups(const BlockQ8_0& b, __m512i* g) {
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    int32_t word;
    std::memcpy(&word, b.qs + 4 * k, 4);
    g[k] = _mm512_xor_si512(_mm512_set1_epi32(word), _mm512_set1_epi8(static_cast<char>(0x80)));
  }
}

// Block ib of R weight rows x one panel into the rows' vectors of its chain, chains[r].
template <class F, int R>
HWY_INLINE void PanelBlock(const uint8_t* w, size_t stride, const VnniPanelBlock& pb, int64_t ib, const float* f16,
                           __m512* chains) {
  using Block = typename F::Block;
  // (The formats with a minimum hold s_x where the others hold the bias; theirs is 0.)
  const __m512i bias = F::kHasMin ? _mm512_setzero_si512() : _mm512_load_si512(pb.bias);
  const __m512 dx = _mm512_load_ps(pb.scale);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const Block& b = reinterpret_cast<const Block*>(w + r * stride)[ib];
    __m512i g[8];
    BroadcastGroups(b, g);
    // Two partial sums so the vpdpbusd latency overlaps; integer adds are exact.
    __m512i s0 = bias, s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 8; k += 2) {
      s0 = _mm512_dpbusd_epi32(s0, g[k], _mm512_load_si512(pb.groups[k]));
      s1 = _mm512_dpbusd_epi32(s1, g[k + 1], _mm512_load_si512(pb.groups[k + 1]));
    }
    const __m512 p = _mm512_mul_ps(_mm512_set1_ps(f16[b.d]), dx);
    chains[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), p, chains[r]);
  }
}

// The per-element definition's block order for kernels that keep the four chains in
// registers (c0..c3, arrays of vectors): step(ib, chain) for every block ib < nb rounded up
// to 8 (step skips ib >= nb), eight at a time, chain k taking blocks 8s + 2k and 8s + 2k + 1.
template <class Step, class V>
HWY_INLINE void StepChainsInBlockOrder(int64_t nb, const Step& step, V* c0, V* c1, V* c2, V* c3) {
  for (int64_t b0 = 0; b0 < nb; b0 += 8) {
    step(b0, c0);
    step(b0 + 1, c0);
    step(b0 + 2, c1);
    step(b0 + 3, c1);
    step(b0 + 4, c2);
    step(b0 + 5, c2);
    step(b0 + 6, c3);
    step(b0 + 7, c3);
  }
}

// The mchains of R weight rows (Q4_1/Q5_1) x one panel, summed in ChainSum's tree, lane by
// lane: out_lanes[r] lane c = sum of m_w * s_x for weight row r and activation row c. A pass
// of its own after the chains: with both sets live, 32 vectors of chains alone would fill
// the register file. It reads only m (the rows' blocks just used, in cache) and s_x.
template <class F, int R>
HWY_INLINE void PanelMinsT(const uint8_t* w, size_t stride, const VnniPanelBlock* panel, int64_t nb, const float* f16,
                           __m512* out_lanes) {
  using Block = typename F::Block;
  __m512 m0[R], m1[R], m2[R], m3[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) m0[r] = m1[r] = m2[r] = m3[r] = _mm512_setzero_ps();
  StepChainsInBlockOrder(
      nb,
      [&](int64_t ib, __m512* mchain) HWY_ATTR {
        if (ib >= nb) return;
        const __m512 sx = _mm512_load_ps(panel[ib].sum_scale);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const Block& b = reinterpret_cast<const Block*>(w + r * stride)[ib];
          mchain[r] = _mm512_fmadd_ps(_mm512_set1_ps(f16[b.m]), sx, mchain[r]);
        }
      },
      m0, m1, m2, m3);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) out_lanes[r] = LaneChainSum(m0[r], m1[r], m2[r], m3[r]);
}

// R weight rows x one panel: out_lanes[r] lane c = weight row r with activation row c. The
// 4 chains of each row stay in registers: blocks go 8 at a time, chain j taking blocks
// 8s + 2j and 8s + 2j + 1.
template <class F, int R>
HWY_INLINE void VnniPanelT(const uint8_t* w, size_t stride, const VnniPanelBlock* panel, int64_t nb,
                           __m512* out_lanes) {
  const float* f16 = fp16_table();
  __m512 c0[R], c1[R], c2[R], c3[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) c0[r] = c1[r] = c2[r] = c3[r] = _mm512_setzero_ps();
  StepChainsInBlockOrder(
      nb,
      [&](int64_t ib, __m512* chain) HWY_ATTR {
        if (ib < nb) PanelBlock<F, R>(w, stride, panel[ib], ib, f16, chain);
      },
      c0, c1, c2, c3);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) out_lanes[r] = LaneChainSum(c0[r], c1[r], c2[r], c3[r]);
  if constexpr (F::kHasMin) {
    __m512 mins[R];
    PanelMinsT<F, R>(w, stride, panel, nb, f16, mins);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) out_lanes[r] = _mm512_add_ps(out_lanes[r], mins[r]);
  }
}

// The tile on prepared activations: out[c * out_stride + r] for r < n_rows, c < n_act.
template <class F>
void VnniTileRun(const void* weight, size_t row_stride, int64_t n_rows, const void* prepared, size_t /*act_stride*/,
                 int64_t n_act, int64_t n, float* out, int64_t out_stride) {
  const auto* w = static_cast<const uint8_t*>(weight);
  const int64_t nb = n / kQK;
  const VnniPanelBlock* panels = AlignedPanelBlocks<VnniPanelBlock>(prepared);
  ForEachPanel(n_rows, n_act, out, out_stride, [&](auto rows, int64_t r, int64_t p, __m512* lanes) HWY_ATTR {
    VnniPanelT<F, decltype(rows)::value>(w + r * row_stride, row_stride, panels + p * nb, nb, lanes);
  });
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_Q_INL_H_ toggle
