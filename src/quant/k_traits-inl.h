// Per-target super-block steps of the K-quants (Q2_K..Q6_K) with Q8_K activations, shared by
// the one-row kernels (dot_simd_k.cc) and the multi-row tile kernels (dot_tile_k.cc), which
// must compute identical floats. A step takes super-block i of R weight rows and C activation
// rows: everything that depends on one weight row only (scales, unpacked levels) is decoded
// once and used for the C activation rows, the widened activations (and Q4_K/Q5_K's paired
// group sums) once for the R weight rows. The dot of a (weight row, activation row) pair is
// the same integer sum, converted and multiply-added into its own accumulator with the same
// operations, whatever R and C are: dot is the step with R = C = 1.
// Re-included once per Highway target through foreach_target.h, hence the toggle guard.
//
// Per 256-element super-block the weights are unpacked to unsigned int16 levels and dotted
// with the widened activations into int32 lanes; the whole super-block is one exact integer
// sum. Sub-block scales are applied in int16 (level * scale fits) or, for Q4_K/Q5_K, by
// packing two sub-block dots into one int32 and multiply-adding the scale pair. Offsets of
// the signed formats (Q3_K: -4, Q6_K: -32) are folded in exactly as -offset * sum_j scale_j *
// bsum_j (Q8_K's group sums) on lane 0. One FMA per super-block scales by d_w * d_x; weight
// mins (Q2_K, Q4_K, Q5_K) are a separate fp32 term, as in the reference.
//
// Scales are decoded in registers: writing them to a small array with scalar stores and
// reading it back with a vector load defeats store-to-load forwarding and stalls every
// super-block (this halved Q3_K's speed).
#if defined(SF_QUANT_K_TRAITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_K_TRAITS_INL_H_
#undef SF_QUANT_K_TRAITS_INL_H_
#else
#define SF_QUANT_K_TRAITS_INL_H_
#endif

#include <cstring>
#include <type_traits>

#include "quant/block_types.h"
#include "quant/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

using D1 = hn::CappedTag<float, 1>;
using V1 = hn::Vec<D1>;
using DS8 = hn::CappedTag<int8_t, 16>;  // the 16 sub-block scales (all targets: 16 lanes)
using VS8 = hn::Vec<DS8>;

// 16 bytes from two 64-bit words held in registers (no trip through memory).
HWY_INLINE VS8 BytesFromWords(uint64_t lo, uint64_t hi) {
  const hn::CappedTag<uint64_t, 2> d64;
  const hn::CappedTag<uint64_t, 1> d1;
  return hn::BitCast(DS8(), hn::Combine(d64, hn::Set(d1, hi), hn::Set(d1, lo)));
}

// Adds `value` to lane 0 only, keeping the lane sum exact.
HWY_INLINE V32 AddToLane0(V32 v, int32_t value) {
  const D32 d32;
  return v + hn::IfThenElseZero(hn::FirstN(d32, 1), hn::Set(d32, value));
}

// sum_j s_j * bsums_j for 16 int8 values s (exact): the s widened once per weight row
// (BsumWeights), then dotted with each activation row's group sums (DotBsums).
using DW = hn::CappedTag<int16_t, 16>;
inline constexpr size_t kBsumVecs = 16 / hn::MaxLanes(DW());
struct BsumWeights {
  // Declared, not implicit: GCC compiles an implicit constructor without the target's
  // attributes, and on Arm it then cannot inline the vectors' own (always_inline) one.
  HWY_INLINE BsumWeights() {}
  hn::Vec<DW> v[kBsumVecs];
};
HWY_INLINE BsumWeights WidenBsumWeights(VS8 s) {
  const hn::Rebind<int8_t, DW> d8;
  HWY_ALIGN int8_t lanes[16];
  hn::Store(s, DS8(), lanes);  // vector store, vector reloads: forwarded
  BsumWeights out;
  for (size_t k = 0; k < kBsumVecs; ++k) out.v[k] = hn::PromoteTo(DW(), hn::LoadU(d8, lanes + k * hn::MaxLanes(DW())));
  return out;
}
HWY_INLINE int32_t DotBsums(const BsumWeights& s, const int16_t* bsums) {
  const hn::Repartition<int32_t, DW> dw32;
  auto sum0 = hn::Zero(dw32), sum1 = hn::Zero(dw32);
  for (size_t k = 0; k < kBsumVecs; ++k) {
    sum0 = hn::ReorderWidenMulAccumulate(dw32, s.v[k], hn::LoadU(DW(), bsums + k * hn::MaxLanes(DW())), sum0, sum1);
  }
  return hn::GetLane(hn::SumOfLanes(dw32, hn::RearrangeToOddPlusEven(sum0, sum1)));
}

// Per-element int16 scales for formats with 16-element sub-blocks. With 32 int16 lanes a
// vector spans two sub-blocks: the scales live as int32 lanes holding the scale in both
// int16 halves, and a lane permutation picks [s_j x16 | s_j+1 x16]. Narrower vectors lie in
// one sub-block and broadcast a scalar.
class Scales16 {
 public:
  Scales16() = default;
  HWY_INLINE explicit Scales16(VS8 scales) { Init(scales); }
  HWY_INLINE void Init(VS8 scales) {
    hn::Store(scales, DS8(), lanes_);  // vector store, same-size reload below: forwarded
    if constexpr (kL16 == 32) {
      const D32 d32;
      const V32 s = hn::PromoteTo(d32, hn::Load(hn::Rebind<int8_t, D32>(), lanes_));
      pairs_ = hn::Or(hn::And(s, hn::Set(d32, 0xFFFF)), hn::ShiftLeft<16>(s));
    } else {
      pairs_ = hn::Zero(D32());
    }
  }
  // Scales of the kL16 elements starting at element e (a multiple of kL16).
  HWY_INLINE V16 At(int e) const {
    if constexpr (kL16 == 32) {
      const D32 d32;
      const V32 idx = hn::ShiftRight<3>(hn::Iota(d32, 0)) + hn::Set(d32, e / 16);
      return hn::BitCast(D16(), hn::TableLookupLanes(pairs_, hn::IndicesFromVec(d32, idx)));
    } else {
      return hn::Set(D16(), lanes_[e / 16]);
    }
  }

 private:
  V32 pairs_;
  HWY_ALIGN int8_t lanes_[16];
};

// Formats with 16-element sub-blocks (Q2_K, Q3_K, Q6_K). A super-block is two 128-element
// halves of four 32-element quarters; Load gives the unsigned levels of the four quarters of
// chunk c of a half. Scales returns the 16 signed sub-block scales; level - kOffset is the
// signed weight.
struct Q2KFormat {
  using Block = BlockQ2_K;
  static constexpr int kOffset = 0;
  static HWY_INLINE VS8 Scales(const Block& b) {
    const hn::Rebind<uint8_t, DS8> du8;
    return hn::BitCast(DS8(), hn::And(hn::LoadU(du8, b.scales), hn::Set(du8, 0xF)));
  }
  static HWY_INLINE VS8 Mins(const Block& b) {
    const hn::Rebind<uint8_t, DS8> du8;
    return hn::BitCast(DS8(), hn::ShiftRight<4>(hn::LoadU(du8, b.scales)));
  }
  static HWY_INLINE void Load(const Block& b, int half, size_t c, V16* q) {
    const V16 v = LoadU8(b.qs + 32 * half + c * kL16);
    const V16 k3 = hn::Set(D16(), 3);
    q[0] = hn::And(v, k3);
    q[1] = hn::And(hn::ShiftRight<2>(v), k3);
    q[2] = hn::And(hn::ShiftRight<4>(v), k3);
    q[3] = hn::ShiftRight<6>(v);
  }
};

struct Q3KFormat {
  using Block = BlockQ3_K;
  static constexpr int kOffset = 4;  // level = low2 + 4 * hbit stands for level - 4
  static HWY_INLINE VS8 Scales(const Block& b) {
    // 16 six-bit scales (layout in unpack_scale_q3_k), four per 32-bit word.
    uint64_t low, high;
    unpack_scales_q3_k_words(b.scales, &low, &high);
    return BytesFromWords(low, high) - hn::Set(DS8(), 32);
  }
  static HWY_INLINE void Load(const Block& b, int half, size_t c, V16* q) {
    const V16 v = LoadU8(b.qs + 32 * half + c * kL16);
    // hmask bit 4 * half + k of byte l is the third bit of element l of quarter k; move it
    // to bit 2 of the level.
    const V16 h = hn::ShiftRightSame(hn::ShiftLeft<2>(LoadU8(b.hmask + c * kL16)), 4 * half);
    const V16 k3 = hn::Set(D16(), 3), k4 = hn::Set(D16(), 4);
    q[0] = hn::Or(hn::And(v, k3), hn::And(h, k4));
    q[1] = hn::Or(hn::And(hn::ShiftRight<2>(v), k3), hn::And(hn::ShiftRight<1>(h), k4));
    q[2] = hn::Or(hn::And(hn::ShiftRight<4>(v), k3), hn::And(hn::ShiftRight<2>(h), k4));
    q[3] = hn::Or(hn::ShiftRight<6>(v), hn::And(hn::ShiftRight<3>(h), k4));
  }
};

// Q6_K: per half, ql[0..32) holds quarters 0 (low nibble) and 2 (high), ql[32..64) quarters
// 1 and 3; qh holds the two high bits of quarter k at bits 2k.
struct Q6KFormat {
  using Block = BlockQ6_K;
  static constexpr int kOffset = 32;
  static HWY_INLINE VS8 Scales(const Block& b) { return hn::LoadU(DS8(), b.scales); }
  static HWY_INLINE void Load(const Block& b, int half, size_t c, V16* q) {
    const V16 k15 = hn::Set(D16(), 15), k48 = hn::Set(D16(), 0x30);
    const V16 h = LoadU8(b.qh + 32 * half + c * kL16);
    const V16 l0 = LoadU8(b.ql + 64 * half + c * kL16);
    const V16 l1 = LoadU8(b.ql + 64 * half + 32 + c * kL16);
    q[0] = hn::Or(hn::And(l0, k15), hn::And(hn::ShiftLeft<4>(h), k48));
    q[1] = hn::Or(hn::And(l1, k15), hn::And(hn::ShiftLeft<2>(h), k48));
    q[2] = hn::Or(hn::ShiftRight<4>(l0), hn::And(h, k48));
    q[3] = hn::Or(hn::ShiftRight<4>(l1), hn::And(hn::ShiftRight<2>(h), k48));
  }
};

// Accumulators of one (weight row, activation row) pair of a 16-element-sub-block format.
struct AccK16 {
  HWY_INLINE AccK16() {}  // declared, not implicit: see BsumWeights
  VF acc;
  V1 accm;  // Q2_K's mins
};
HWY_INLINE void ZeroK16(AccK16& a) {
  a.acc = hn::Zero(DF());
  a.accm = hn::Zero(D1());
}
HWY_INLINE float FinishK16(const AccK16& a) { return ReduceSum(a.acc) - hn::GetLane(a.accm); }

// Super-block i of weight rows w[0..R) (each row's blocks) and activation rows x[0..C).
template <class F, int R, int C>
HWY_INLINE void StepK16(const typename F::Block* const* w, const BlockQ8_K* const* x, int64_t i, const float* f16,
                        AccK16 (*acc)[C]) {
  VS8 sc[R];
  Scales16 scales[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    sc[r] = F::Scales(w[r][i]);
    scales[r].Init(sc[r]);
  }
  V32 s0[R][C], s1[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) s0[r][j] = s1[r][j] = hn::Zero(D32());
  }
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
#pragma GCC unroll 4
    for (size_t c = 0; c < kChunks; ++c) {
      V16 q[R][4];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) F::Load(w[r][i], half, c, q[r]);
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const int e = 128 * half + 32 * k + static_cast<int>(c * kL16);
        V16 qs[R];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) qs[r] = q[r][k] * scales[r].At(e);
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j) {
          const V16 xv = LoadI8(x[j][i].qs + e);
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r) MulAcc(qs[r], xv, s0[r][j], s1[r][j]);
        }
      }
    }
  }
  BsumWeights offsets[R], mins[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    if constexpr (F::kOffset != 0) offsets[r] = WidenBsumWeights(sc[r]);
    if constexpr (std::is_same_v<F, Q2KFormat>) mins[r] = WidenBsumWeights(F::Mins(w[r][i]));
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const auto& b = w[r][i];
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      const BlockQ8_K& xb = x[j][i];
      V32 total = FinishDot(s0[r][j], s1[r][j]);
      if constexpr (F::kOffset != 0) {
        total = AddToLane0(total, -F::kOffset * DotBsums(offsets[r], xb.bsums));
      }
      AccK16& a = acc[r][j];
      a.acc = hn::MulAdd(hn::ConvertTo(DF(), total), hn::Set(DF(), xb.d * f16[b.d]), a.acc);
      if constexpr (std::is_same_v<F, Q2KFormat>) {
        const float imin = static_cast<float>(DotBsums(mins[r], xb.bsums));
        a.accm = hn::MulAdd(hn::Set(D1(), xb.d * f16[b.dmin]), hn::Set(D1(), imin), a.accm);
      }
    }
  }
}

// Q4_K/Q5_K: 8 six-bit scales and 8 mins (layout in unpack_scale_min_k4) decoded four at a
// time in 32-bit words; returns bytes [scale 0..7, min 0..7].
HWY_INLINE VS8 ScalesMinsK4(const uint8_t* packed) {
  uint32_t u[3];
  std::memcpy(u, packed, 12);
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  const uint64_t sc_lo = u[0] & kLow6;
  const uint64_t sc_hi = (u[2] & kLow4) | (((u[0] >> 6) & kLow2) << 4);
  const uint64_t mn_lo = u[1] & kLow6;
  const uint64_t mn_hi = ((u[2] >> 4) & kLow4) | (((u[1] >> 6) & kLow2) << 4);
  return BytesFromWords(sc_lo | (sc_hi << 32), mn_lo | (mn_hi << 32));
}

// Eight-lane int32/float for the mins (two vectors of four on 128-bit targets).
using DM = hn::CappedTag<int32_t, 8>;
using DMF = hn::Rebind<float, DM>;
using VM = hn::Vec<DM>;
using VMF = hn::Vec<DMF>;
inline constexpr size_t kLM = hn::MaxLanes(DM());
inline constexpr size_t kMinVecs = 8 / kLM;

// The eight mins m_j of a weight super-block as int32 lanes.
HWY_INLINE void MinsK4(VS8 scales_mins, VM* m) {
  HWY_ALIGN uint8_t bytes[16];
  hn::Store(hn::BitCast(hn::Rebind<uint8_t, DS8>(), scales_mins), hn::Rebind<uint8_t, DS8>(), bytes);
  const hn::Rebind<uint8_t, DM> d8;
  for (size_t k = 0; k < kMinVecs; ++k) m[k] = hn::PromoteTo(DM(), hn::LoadU(d8, bytes + 8 + k * kLM));
}

// bsum_2j + bsum_2j+1 in lane j: an activation's sums over the two 16-element groups under
// each 32-element sub-block.
HWY_INLINE void PairSumsK4(const int16_t* bsums, VM* pair_sum) {
  for (size_t k = 0; k < kMinVecs; ++k) {
    int32_t packed[kLM];  // two int16 sums per int32 lane
    std::memcpy(packed, bsums + 2 * k * kLM, sizeof(packed));
    const auto b = hn::LoadU(DM(), packed);
    pair_sum[k] = hn::ShiftRight<16>(hn::ShiftLeft<16>(b)) + hn::ShiftRight<16>(b);
  }
}

// Accumulators of one (weight row, activation row) pair of Q4_K/Q5_K.
struct AccK4 {
  HWY_INLINE AccK4() {}  // declared, not implicit: see BsumWeights
  VF acc;
  VMF accm[kMinVecs];  // dmin * m_j * pair sum_j in lane j
};
HWY_INLINE void ZeroK4(AccK4& a) {
  a.acc = hn::Zero(DF());
  for (auto& m : a.accm) m = hn::Zero(DMF());
}
HWY_INLINE float FinishK4(const AccK4& a) {
  VMF mins = a.accm[0];
  for (size_t k = 1; k < kMinVecs; ++k) mins = mins + a.accm[k];
  return ReduceSum(a.acc) - hn::GetLane(hn::SumOfLanes(DMF(), mins));
}

// Q4_K/Q5_K: four 64-element groups, each one 32-byte run of nibbles (low nibbles: sub-block
// 2g, high: 2g + 1); Q5_K's fifth bits sit in qh[l] bit 2g (low) and 2g + 1 (high).
// Super-block i of weight rows w[0..R) and activation rows x[0..C).
template <bool kFiveBit, class Block, int R, int C>
HWY_INLINE void StepK4(const Block* const* w, const BlockQ8_K* const* x, int64_t i, const float* f16, AccK4 (*acc)[C]) {
  const V16 k15 = hn::Set(D16(), 15), k16 = hn::Set(D16(), 16);
  VS8 scales_mins[R];
  // Scale pair of group g: (scale 2g, scale 2g+1) as the int16 halves of an int32, so a
  // 32-bit broadcast (a plain load on x86) is the int16 vector (sc_lo, sc_hi, ...).
  HWY_ALIGN int32_t pairs[R][4];
  VM m[R][kMinVecs];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    scales_mins[r] = ScalesMinsK4(w[r][i].scales);
    MinsK4(scales_mins[r], m[r]);
    HWY_ALIGN uint8_t bytes[16];
    hn::Store(hn::BitCast(hn::Rebind<uint8_t, DS8>(), scales_mins[r]), hn::Rebind<uint8_t, DS8>(), bytes);
    for (int g = 0; g < 4; ++g) pairs[r][g] = bytes[2 * g] | (bytes[2 * g + 1] << 16);
  }
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
    const BlockQ8_K& xb = x[j][i];
    VM pair_sum[kMinVecs];
    PairSumsK4(xb.bsums, pair_sum);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const VMF vd = hn::Set(DMF(), xb.d * f16[w[r][i].dmin]);
      for (size_t k = 0; k < kMinVecs; ++k) {
        acc[r][j].accm[k] = hn::MulAdd(hn::ConvertTo(DMF(), m[r][k] * pair_sum[k]), vd, acc[r][j].accm[k]);
      }
    }
  }
  V16 hv[R][kChunks];
  if constexpr (kFiveBit) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (size_t c = 0; c < kChunks; ++c) hv[r][c] = LoadU8(w[r][i].qh + c * kL16);
    }
  }
  V32 s0[R][C], s1[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) s0[r][j] = s1[r][j] = hn::Zero(D32());
  }
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    V16 scale_pair[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) scale_pair[r] = hn::BitCast(D16(), hn::Set(D32(), pairs[r][g]));
#pragma GCC unroll 4
    for (size_t c = 0; c < kChunks; ++c) {
      V16 lo[R], hi[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const V16 v = LoadU8(w[r][i].qs + 32 * g + c * kL16);
        lo[r] = hn::And(v, k15);
        hi[r] = hn::ShiftRight<4>(v);
        if constexpr (kFiveBit) {
          lo[r] = hn::Or(lo[r], hn::And(hn::ShiftLeft<4>(hv[r][c]), k16));
          hi[r] = hn::Or(hi[r], hn::And(hn::ShiftLeft<3>(hv[r][c]), k16));
          hv[r][c] = hn::ShiftRight<2>(hv[r][c]);
        }
      }
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) {
        const int8_t* xq = x[j][i].qs + 64 * g + c * kL16;
        const V16 xlo = LoadI8(xq), xhi = LoadI8(xq + 32);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          // Unscaled sub-block dots fit int16 (|sum| <= 2 * 31 * 127), so pack the two into
          // the halves of each int32 lane and let one more pairwise multiply-add apply both
          // scales: cheaper than scaling every weight.
          V32 lo0 = hn::Zero(D32()), lo1 = lo0, hi0 = lo0, hi1 = lo0;
          MulAcc(lo[r], xlo, lo0, lo1);
          MulAcc(hi[r], xhi, hi0, hi1);
          const V32 packed =
              hn::Or(hn::And(FinishDot(lo0, lo1), hn::Set(D32(), 0xFFFF)), hn::ShiftLeft<16>(FinishDot(hi0, hi1)));
          MulAcc(hn::BitCast(D16(), packed), scale_pair[r], s0[r][j], s1[r][j]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      const VF sum = hn::ConvertTo(DF(), FinishDot(s0[r][j], s1[r][j]));
      acc[r][j].acc = hn::MulAdd(sum, hn::Set(DF(), x[j][i].d * f16[w[r][i].d]), acc[r][j].acc);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_K_TRAITS_INL_H_ toggle
