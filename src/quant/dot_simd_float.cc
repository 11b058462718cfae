// SIMD dot kernels for the float formats: F32 x F32, F16 x F16, F16 x F32, BF16 x BF16,
// BF16 x F32, one row (dot), several rows (dot_rows) and tiles of weight rows x activation
// rows (dot_tile.h). Halves are widened to fp32 (vcvtph2ps / shift for bf16).
//
// The float of every (weight row, activation row), whichever of the three computes it, with
// L fp32 lanes per vector:
//   1. four accumulator vectors a0..a3; chunk k (L elements at k * L) of the first
//      4 * L * floor(n / 4L) elements goes into a_(k mod 4) with one hn::MulAdd, in chunk
//      order; the remaining whole chunks go into a0, in order;
//   2. s = (a0 + a1) + (a2 + a3);
//   3. the lanes of s summed by the halving tree of lane_tree-inl.h;
//   4. the last n mod L products added one by one, in element order, with hn::MulAdd on one
//      lane.
// hn::MulAdd is an FMA (one rounding) on AVX2, AVX-512 and AArch64, a multiply and an add on
// SSE4/SSSE3; L is 16, 8 or 4. So the floats differ between targets, never between the
// entry points of one target.
// dot runs the four chains interleaved (independent FMAs hide the latency). The tiles, and
// dot_rows for rows under 16 chunks, run them one after the other for a block of rows (each
// chain still sees the same FMAs in the same order) and sum the lanes of the whole block at
// once (SumLanesTreeBatch), so the horizontal work, which dominated small matrices (K = 64:
// one chunk per chain on AVX-512), is paid about once per vector of outputs instead of once
// per output. Longer rows in dot_rows go through dot.
#include <algorithm>
#include <cstring>

#include "base/fp16.h"
#include "quant/dot_tile.h"
#include "quant/dot_tile_float.h"
#include "quant/kernel_registry.h"
#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/dot_simd_float.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "quant/lane_tree-inl.h"
#include "quant/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

struct F32 {
  using T = float;
  static HWY_INLINE VF Load(const T* p) { return hn::LoadU(DF(), p); }
  static float Scalar(T v) { return v; }
};
struct F16 {
  using T = hwy::float16_t;
  static HWY_INLINE VF Load(const T* p) {
    const hn::Rebind<T, DF> dh;
    return hn::PromoteTo(DF(), hn::LoadU(dh, p));
  }
  // The conversion table (the values of fp16_to_fp32, without its call per element).
  static HWY_INLINE float Scalar(T v) {
    static const float* const table = fp16_table();
    uint16_t bits;
    std::memcpy(&bits, &v, 2);
    return table[bits];
  }
};
struct BF16 {
  using T = hwy::bfloat16_t;
  static HWY_INLINE VF Load(const T* p) {
    const hn::Rebind<T, DF> dh;
    return hn::PromoteTo(DF(), hn::LoadU(dh, p));
  }
  static float Scalar(T v) {
    uint16_t bits;
    std::memcpy(&bits, &v, 2);
    return bf16_to_fp32(bits);
  }
};

inline constexpr int64_t kL = static_cast<int64_t>(kLF);

// Step 4: the scalar tail, an explicit one-lane MulAdd so the rounding is the code's, not the
// compiler's contraction choice.
template <class W, class X>
HWY_INLINE float AddTail(const typename W::T* w, const typename X::T* x, int64_t i, int64_t n, float sum) {
  const hn::CappedTag<float, 1> d1;
  auto s = hn::Set(d1, sum);
  for (; i < n; ++i) s = hn::MulAdd(hn::Set(d1, W::Scalar(w[i])), hn::Set(d1, X::Scalar(x[i])), s);
  return hn::GetLane(s);
}

// dot: steps 1-4 on one row, the chains interleaved. Inlined into dot_rows' row loop as well
// (a call per row cost ~1.5-4 ns at K = 64..172).
template <class W, class X>
HWY_INLINE float DotT(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const typename W::T*>(wp);
  const auto* x = static_cast<const typename X::T*>(xp);
  VF a0 = hn::Zero(DF()), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 * kL <= n; i += 4 * kL) {
    a0 = hn::MulAdd(W::Load(w + i), X::Load(x + i), a0);
    a1 = hn::MulAdd(W::Load(w + i + kL), X::Load(x + i + kL), a1);
    a2 = hn::MulAdd(W::Load(w + i + 2 * kL), X::Load(x + i + 2 * kL), a2);
    a3 = hn::MulAdd(W::Load(w + i + 3 * kL), X::Load(x + i + 3 * kL), a3);
  }
  for (; i + kL <= n; i += kL) a0 = hn::MulAdd(W::Load(w + i), X::Load(x + i), a0);
  return AddTail<W, X>(w, x, i, n, SumLanesTree((a0 + a1) + (a2 + a3)));
}

template <class W, class X>
float Dot(const void* w, const void* x, int64_t n) {
  return DotT<W, X>(w, x, n);
}

// One chunk (elements i..i+L) of R weight rows x C activation rows into acc[r * C + c]: each
// weight vector is loaded and widened once for the C activation rows, and each activation
// vector once for the R weight rows.
template <class W, class X, int R, int C>
HWY_INLINE void ChunkStep(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t i, VF* acc) {
  VF xv[C];
#pragma GCC unroll 16
  for (int c = 0; c < C; ++c) xv[c] = X::Load(reinterpret_cast<const typename X::T*>(x + c * xs) + i);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const VF wv = W::Load(reinterpret_cast<const typename W::T*>(w + r * ws) + i);
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) acc[r * C + c] = hn::MulAdd(wv, xv[c], acc[r * C + c]);
  }
}

// Step 4 for R weight rows x C activation rows: sums[r * C + c] gets the products of
// elements i..n of its two rows added in element order, exactly as AddTail does, but with
// the R x C chains interleaved (independent FMAs instead of one dependent chain at a time:
// at K = 172 on AVX-512, 12 tail elements per output took most of the time).
template <class W, class X, int R, int C>
HWY_INLINE void AddTails(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t i, int64_t n, float* sums) {
  const hn::CappedTag<float, 1> d1;
  using V1 = hn::Vec<decltype(d1)>;
  float wt[R][kL], xt[C][kL];
  const int64_t count = n - i;
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const auto* wr = reinterpret_cast<const typename W::T*>(w + r * ws) + i;
    for (int64_t k = 0; k < count; ++k) wt[r][k] = W::Scalar(wr[k]);
  }
#pragma GCC unroll 16
  for (int c = 0; c < C; ++c) {
    const auto* xc = reinterpret_cast<const typename X::T*>(x + c * xs) + i;
    for (int64_t k = 0; k < count; ++k) xt[c][k] = X::Scalar(xc[k]);
  }
  V1 s[R * C];
#pragma GCC unroll 16
  for (int k = 0; k < R * C; ++k) s[k] = hn::Set(d1, sums[k]);
  for (int64_t k = 0; k < count; ++k) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) s[r * C + c] = hn::MulAdd(hn::Set(d1, wt[r][k]), hn::Set(d1, xt[c][k]), s[r * C + c]);
    }
  }
#pragma GCC unroll 16
  for (int k = 0; k < R * C; ++k) sums[k] = hn::GetLane(s[k]);
}

// Steps 1 and 2 for R weight rows x C activation rows into total[r * C + c], one chain at a
// time: only 3 x R x C vectors live at the peak, so more pairs share each load; each row is
// read four times, a quarter of its chunks each time.
template <class W, class X, int R, int C>
HWY_INLINE void ChainByChainTotals(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t n, VF* total) {
  constexpr int kN = R * C;
  const int64_t groups = n / (4 * kL);
  const int64_t singles = n / kL - 4 * groups;
  VF s01[kN], s2[kN], acc[kN];
#pragma GCC unroll 4
  for (int chain = 0; chain < 4; ++chain) {
#pragma GCC unroll 16
    for (int k = 0; k < kN; ++k) acc[k] = hn::Zero(DF());
    for (int64_t g = 0; g < groups; ++g) ChunkStep<W, X, R, C>(w, ws, x, xs, (4 * g + chain) * kL, acc);
    if (chain == 0) {
      for (int64_t s = 0; s < singles; ++s) ChunkStep<W, X, R, C>(w, ws, x, xs, (4 * groups + s) * kL, acc);
    }
#pragma GCC unroll 16
    for (int k = 0; k < kN; ++k) {
      if (chain == 0) s01[k] = acc[k];
      if (chain == 1) s01[k] = s01[k] + acc[k];
      if (chain == 2) s2[k] = acc[k];
      if (chain == 3) total[k] = s01[k] + (s2[k] + acc[k]);
    }
  }
}

// R weight rows x C activation rows; out[c * os + r]: steps 1 and 2, then step 3 for up to
// L pairs at once, then step 4.
template <class W, class X, int R, int C>
HWY_INLINE void TileT(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t n, float* out, int64_t os) {
  constexpr int kN = R * C;
  VF acc[kN];
  ChainByChainTotals<W, X, R, C>(w, ws, x, xs, n, acc);
  float sums[kN];
  constexpr int kBatch = kN < static_cast<int>(kL) ? kN : static_cast<int>(kL);
  static_assert(kN % kBatch == 0, "whole batches of sums");
#pragma GCC unroll 4
  for (int k = 0; k < kN; k += kBatch) SumLanesTreeBatch<kBatch>(acc + k, sums + k);
  const int64_t tail = n / kL * kL;
  if (tail < n) AddTails<W, X, R, C>(w, ws, x, xs, tail, n, sums);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) out[c * os + r] = sums[r * C + c];
  }
}

// Every weight row against C activation rows: tiles of R rows, then the remainder in halves.
template <class W, class X, int R, int C>
HWY_INLINE void TileRows(const uint8_t* w, size_t ws, int64_t n_rows, const uint8_t* x, size_t xs, int64_t n,
                         float* out, int64_t os) {
  int64_t r = 0;
  for (; r + R <= n_rows; r += R) TileT<W, X, R, C>(w + r * ws, ws, x, xs, n, out + r, os);
  if constexpr (R > 1) {
    if (r < n_rows) TileRows<W, X, R / 2, C>(w + r * ws, ws, n_rows - r, x, xs, n, out + r, os);
  }
}

// Up to kRowBlock weight rows x all activation rows, activation rows outermost: each output
// row (one activation row's outputs) is written in one short burst, as dot_rows per
// activation row writes it. Weight rows outermost wrote every output row once per 4-row
// block, and when matmul's two threads took neighbouring row blocks, the output lines they
// share bounced between the cores for every activation row (stories260K's 172 x 64 matrix
// with 64 rows on 2 threads: 53 us against 22 on one).
template <class W, class X, int R, int C>
HWY_INLINE void TileActs(const uint8_t* w, size_t ws, int64_t n_rows, const uint8_t* x, size_t xs, int64_t n_act,
                         int64_t n, float* out, int64_t os) {
  int64_t c = 0;
  for (; c + C <= n_act; c += C) TileRows<W, X, R, C>(w, ws, n_rows, x + c * xs, xs, n, out + c * os, os);
  if constexpr (C > 1) {
    if (c < n_act) TileActs<W, X, R, C / 2>(w, ws, n_rows, x + c * xs, xs, n_act - c, n, out + c * os, os);
  }
}

// All rows x all activation rows in blocks of 16 weight rows (matmul's own row block), so a
// block's weights stay in L1 while every activation row passes over them.
template <class W, class X, int R, int C>
HWY_INLINE void TileAll(const uint8_t* w, size_t ws, int64_t n_rows, const uint8_t* x, size_t xs, int64_t n_act,
                        int64_t n, float* out, int64_t os) {
  constexpr int64_t kRowBlock = 16;
  for (int64_t r = 0; r < n_rows; r += kRowBlock) {
    TileActs<W, X, R, C>(w + r * ws, ws, std::min(kRowBlock, n_rows - r), x, xs, n_act, n, out + r, os);
  }
}

// Shapes and paths, measured (quant_dot_bench --batch, F32, K = 64..4096, 64 and 512 rows,
// AVX3_DL, AVX2 and SSE4; docs/kernels.md). TileT holds 3 vectors per (weight row,
// activation row) pair at the peak of steps 1-2, so 8 pairs fill 32 registers with the
// loads; the lane sums cost about one fold per pair from 4 pairs up, so batches under L lose
// nothing there.
// - dot_rows: 8 rows per TileT on every target (4 was slower on AVX2 and SSE4 too, 16 slower
//   on AVX-512) while rows are under 16 chunks; from 16 chunks on (n >= 256 on AVX-512) the
//   lane sums no longer matter and one sequential row at a time streams better from L2 than
//   8 rows read chain by chain (K = 512, 512 rows: 8.0 us against 9.3), so it is dot per row.
// - tiles: 4 x 2 (4 x 4 spills and was 10-15% slower at K = 64), except 4 x 4 on
//   32-register targets from 8 chunks on, where it was ~25% faster (at K = 172 the scalar
//   tails of step 4 dominate, and it runs 16 of them side by side).
inline constexpr int kVecRegs = kL == 16 || HWY_ARCH_ARM_A64 ? 32 : 16;

template <class W, class X>
void DotRows(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  const auto* wp = static_cast<const uint8_t*>(w);
  if (n >= 16 * kL) {
    for (int64_t r = 0; r < n_rows; ++r) out[r] = DotT<W, X>(wp + r * stride, x, n);
  } else {
    TileAll<W, X, 8, 1>(wp, stride, n_rows, static_cast<const uint8_t*>(x), 0, 1, n, out, 0);
  }
}

template <class W, class X>
void Tile(const void* w, size_t row_stride, int64_t n_rows, const void* act, size_t act_stride, int64_t n_act,
          int64_t n, float* out, int64_t out_stride) {
  const auto* wp = static_cast<const uint8_t*>(w);
  const auto* xp = static_cast<const uint8_t*>(act);
  if (kVecRegs == 32 && n >= 8 * kL) {
    TileAll<W, X, 4, 4>(wp, row_stride, n_rows, xp, act_stride, n_act, n, out, out_stride);
  } else {
    TileAll<W, X, 4, 2>(wp, row_stride, n_rows, xp, act_stride, n_act, n, out, out_stride);
  }
}

template <class W, class X>
constexpr DotKernel Entry(GgmlType w, GgmlType a) {
  return DotKernel{w, a, nullptr, &Dot<W, X>, &DotRows<W, X>};
}

const DotKernel* GetFloatKernels(size_t* count) {
  using G = GgmlType;
  static constexpr DotKernel kKernels[] = {
      Entry<F32, F32>(G::F32, G::F32),     Entry<F16, F16>(G::F16, G::F16),   Entry<F16, F32>(G::F16, G::F32),
      Entry<BF16, BF16>(G::BF16, G::BF16), Entry<BF16, F32>(G::BF16, G::F32),
  };
  *count = std::size(kKernels);
  return kKernels;
}

DotTile GetFloatTile(GgmlType weight_type, GgmlType activation_type) {
  using G = GgmlType;
  if (weight_type == G::F32 && activation_type == G::F32) return DotTile{&Tile<F32, F32>};
  if (weight_type == G::F16 && activation_type == G::F16) return DotTile{&Tile<F16, F16>};
  if (weight_type == G::F16 && activation_type == G::F32) return DotTile{&Tile<F16, F32>};
  if (weight_type == G::BF16 && activation_type == G::BF16) return DotTile{&Tile<BF16, BF16>};
  if (weight_type == G::BF16 && activation_type == G::F32) return DotTile{&Tile<BF16, F32>};
  return DotTile{};
}

#else  // HWY_SCALAR: the reference kernels are used (row by row; no tiles).

const DotKernel* GetFloatKernels(size_t* count) {
  *count = 0;
  return nullptr;
}

DotTile GetFloatTile(GgmlType, GgmlType) { return DotTile{}; }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf::quant {

HWY_EXPORT(GetFloatKernels);
HWY_EXPORT(GetFloatTile);

KernelList float_dot_kernels(int64_t target) {
  KernelList list;
  list.data = pick_target(HWY_DISPATCH_TABLE(GetFloatKernels), target)(&list.size);
  return list;
}

DotTile float_dot_tile(GgmlType weight_type, GgmlType activation_type, int64_t target) {
  return pick_target(HWY_DISPATCH_TABLE(GetFloatTile), target)(weight_type, activation_type);
}

}  // namespace sf::quant
#endif  // HWY_ONCE
