// A fixed summation order for the lanes of a float vector, in two forms that give the same
// floats: SumLanesTree for one vector (the one-row dot), SumLanesTreeBatch for up to a
// vector's worth of them at once (dot_rows and the tiles of the float formats, which must be
// bit-identical to the one-row dot). Re-included once per Highway target through
// foreach_target.h, hence the toggle guard.
//
// The tree over L lanes: halve, adding lane j and lane j + L/2 for j < L/2, then lane j and
// j + L/4, ..., down to one lane. hn::SumOfLanes does not promise an order; this one is
// written out. The batch form folds pairs of vectors so that each step halves every input's
// lanes with the same pairs (a transpose-reduce): N inputs cost about N/L * (3 log2 L)
// shuffles and adds instead of N * 2 log2 L, and each sum lands in one lane of one vector.
// IEEE addition is commutative, so whether a pair is added as a + b or b + a does not
// change the float; only which lanes are paired matters, and that is the same in both.
#if defined(SF_QUANT_LANE_TREE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_LANE_TREE_INL_H_
#undef SF_QUANT_LANE_TREE_INL_H_
#else
#define SF_QUANT_LANE_TREE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "quant/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

inline constexpr size_t kLF = hn::MaxLanes(DF());
static_assert(kLF == 4 || kLF == 8 || kLF == 16, "the lane tree is written for 128/256/512-bit vectors");

// The tree's last two steps on one 128-bit vector [v0 v1 v2 v3]: (v0 + v2) + (v1 + v3).
template <class V>
HWY_INLINE float SumLanes4(V v) {
  v = v + hn::Shuffle1032(v);  // lane j + lane j+2
  v = v + hn::Shuffle2301(v);  // lane j + lane j+1
  return hn::GetLane(v);
}

// The lanes of v summed by the halving tree.
HWY_INLINE float SumLanesTree(VF v) {
  if constexpr (kLF == 16) {
    const hn::Half<DF> d8;
    const hn::Half<decltype(d8)> d4;
    const auto v8 = hn::LowerHalf(d8, v) + hn::UpperHalf(d8, v);
    return SumLanes4(hn::LowerHalf(d4, v8) + hn::UpperHalf(d4, v8));
  } else if constexpr (kLF == 8) {
    const hn::Half<DF> d4;
    return SumLanes4(hn::LowerHalf(d4, v) + hn::UpperHalf(d4, v));
  } else {
    return SumLanes4(v);
  }
}

// One step of the batch tree. a and b hold segments of kSeg lanes each (kSeg = L, L/2, ...,
// 2), every segment one input's partial sums in lane order. Returns segments of kSeg / 2
// lanes, each the halving step of one segment (lane j + lane j + kSeg/2), ordered
// a's 0, b's 0, a's 1, b's 1, ...
template <size_t kSeg>
HWY_INLINE VF FoldSegments(VF a, VF b) {
  const DF d;
  if constexpr (kSeg == 16) {
    // Two 256-bit halves: [a.lo a.hi] + ... -> [a.lo + a.hi | b.lo + b.hi].
    return hn::ConcatLowerLower(d, b, a) + hn::ConcatUpperUpper(d, b, a);
  } else if constexpr (kSeg == 8) {
    // Pairs of 128-bit blocks: blocks [A0 A1 ...] and [C0 C1 ...] -> [A0 + A1, C0 + C1, ...].
    return hn::OddEvenBlocks(b, a) + hn::SwapAdjacentBlocks(hn::OddEvenBlocks(a, b));
  } else if constexpr (kSeg == 4) {
    // Within each block, 64-bit halves: [a0 a1 | a2 a3] -> [a0 + a2, a1 + a3, b0 + b2, b1 + b3].
#if HWY_HAVE_FLOAT64
    const hn::Repartition<double, DF> d64;
#else
    const hn::Repartition<uint64_t, DF> d64;
#endif
    const auto a64 = hn::BitCast(d64, a), b64 = hn::BitCast(d64, b);
    return hn::BitCast(d, hn::InterleaveLower(d64, a64, b64)) + hn::BitCast(d, hn::InterleaveUpper(d64, a64, b64));
  } else {
    static_assert(kSeg == 2, "segments halve down to pairs of lanes");
    // Adjacent lanes: [a0 a1 a2 a3] -> [a0 + a1, b0 + b1, a2 + a3, b2 + b3].
    return hn::OddEven(b, a) + hn::Shuffle2301(hn::OddEven(a, b));
  }
}

// The fold of N vectors (in place, v[0..N)) down to one: at each step vector j becomes
// FoldSegments(v[2j], v[2j + 1]), or of v[2j] with itself when it has no partner.
template <size_t kSeg, int N>
HWY_INLINE void FoldAll(VF* v) {
  constexpr int kHalf = (N + 1) / 2;
#pragma GCC unroll 16
  for (int j = 0; j < kHalf; ++j) v[j] = FoldSegments<kSeg>(v[2 * j], v[2 * j + 1 < N ? 2 * j + 1 : 2 * j]);
  if constexpr (kSeg > 2) FoldAll<kSeg / 2, kHalf>(v);
}

// Where FoldAll<kLF, N> leaves input r's sum: simulates the segment order step by step.
template <int N>
struct TreeBatchLayout {
  int lane_of[N] = {};
  constexpr TreeBatchLayout() {
    int seg[kLF][kLF] = {};  // seg[vector][segment] = input
    for (int i = 0; i < N; ++i) seg[i][0] = i;
    int count = N, segments = 1;
    for (size_t width = kLF; width > 1; width /= 2) {
      const int half = (count + 1) / 2;
      int next[kLF][kLF] = {};
      for (int j = 0; j < half; ++j) {
        const int a = 2 * j, b = 2 * j + 1 < count ? 2 * j + 1 : 2 * j;
        for (int s = 0; s < segments; ++s) {
          next[j][2 * s] = seg[a][s];
          next[j][2 * s + 1] = seg[b][s];
        }
      }
      for (int j = 0; j < half; ++j)
        for (int s = 0; s < 2 * segments; ++s) seg[j][s] = next[j][s];
      count = half;
      segments *= 2;
    }
    for (int i = 0; i < N; ++i) lane_of[i] = -1;
    for (int lane = static_cast<int>(kLF) - 1; lane >= 0; --lane) lane_of[seg[0][lane]] = lane;
  }
};

// sums[i] = SumLanesTree(v[i]) for i < N (N <= L), bit for bit. v is overwritten.
template <int N>
HWY_INLINE void SumLanesTreeBatch(VF* v, float* sums) {
  static_assert(N >= 1 && N <= static_cast<int>(kLF), "one batch is at most a vector of sums");
  static constexpr TreeBatchLayout<N> kLayout;
  FoldAll<kLF, N>(v);
  HWY_ALIGN float lanes[kLF];
  hn::Store(v[0], DF(), lanes);
#pragma GCC unroll 16
  for (int i = 0; i < N; ++i) sums[i] = lanes[kLayout.lane_of[i]];
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_LANE_TREE_INL_H_ toggle
