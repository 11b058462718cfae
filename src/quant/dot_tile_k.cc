// Tile kernels (dot_tile.h) for the K-quants (Q2_K..Q6_K) with Q8_K activations.
//
// Each super-block of a tile of R weight rows x C activation rows goes through the same
// step (k_traits-inl.h) as the one-row dot of dot_simd_k.cc, with R and C above one: the
// weight scales and unpacked levels are decoded once for the C activation rows and the
// widened activations once for the R weight rows. Every (weight row, activation row) pair
// keeps its own accumulators, updated once per super-block in super-block order exactly as
// dot updates its one set, so each output is the float dot computes.
#include "quant/dot_tile_k.h"

#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/dot_tile.h"
#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/dot_tile_k.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "quant/k_traits-inl.h"
#include "quant/simd_common-inl.h"
#include "quant/vnni_k-inl.h"
#include "quant/vnni_k16-inl.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // the kernels of vnni_k-inl.h inline only into VNNI code
#endif
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

// Two weight rows x four activation rows with 32 vector registers (AVX-512), two x two on
// 16-register targets: the R x C integer sums of a super-block stay in registers next to the
// decoded weights; the float accumulators (touched once per super-block) may live in memory.
inline constexpr int kTileR = 2;
inline constexpr int kTileC = kL16 == 32 ? 4 : 2;

// The step, accumulators and final sum of one format, as dot_simd_k.cc uses them.
template <class F>
struct K16Kernel {
  using Block = typename F::Block;
  using Acc = AccK16;
  template <int R, int C>
  static HWY_INLINE void Step(const Block* const* w, const BlockQ8_K* const* x, int64_t i, const float* f16,
                              Acc (*acc)[C]) {
    StepK16<F, R, C>(w, x, i, f16, acc);
  }
  static HWY_INLINE void Zero(Acc& a) { ZeroK16(a); }
  static HWY_INLINE float Finish(const Acc& a) { return FinishK16(a); }
};

template <bool kFiveBit, class B>
struct K4Kernel {
  using Block = B;
  using Acc = AccK4;
  template <int R, int C>
  static HWY_INLINE void Step(const Block* const* w, const BlockQ8_K* const* x, int64_t i, const float* f16,
                              Acc (*acc)[C]) {
    StepK4<kFiveBit, B, R, C>(w, x, i, f16, acc);
  }
  static HWY_INLINE void Zero(Acc& a) { ZeroK4(a); }
  static HWY_INLINE float Finish(const Acc& a) { return FinishK4(a); }
};

// R weight rows (row r at w + r * stride) x C activation rows (row j at x + j * xstride).
template <class K, int R, int C>
HWY_NOINLINE void TileT(const uint8_t* w, size_t stride, const uint8_t* x, size_t xstride, int64_t n, float* out,
                        int64_t out_stride) {
  using Block = typename K::Block;
  const float* f16 = fp16_table();
  const Block* wr[R];
  const BlockQ8_K* xr[C];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const Block*>(w + r * stride);
  for (int j = 0; j < C; ++j) xr[j] = reinterpret_cast<const BlockQ8_K*>(x + j * xstride);
  typename K::Acc acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) K::Zero(acc[r][j]);
  }
  for (int64_t i = 0; i < n / kQK_K; ++i) K::template Step<R, C>(wr, xr, i, f16, acc);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) out[j * out_stride + r] = K::Finish(acc[r][j]);
  }
}

// The activation rows of R weight rows in tiles of kTileC, then two, then one.
template <class K, int R>
HWY_INLINE void TileRows(const uint8_t* w, size_t stride, const uint8_t* x, size_t xstride, int64_t n_act, int64_t n,
                         float* out, int64_t out_stride) {
  int64_t j = 0;
  for (; j + kTileC <= n_act; j += kTileC)
    TileT<K, R, kTileC>(w, stride, x + j * xstride, xstride, n, out + j * out_stride, out_stride);
  if constexpr (kTileC > 2) {
    if (j + 2 <= n_act) {
      TileT<K, R, 2>(w, stride, x + j * xstride, xstride, n, out + j * out_stride, out_stride);
      j += 2;
    }
  }
  for (; j < n_act; ++j) TileT<K, R, 1>(w, stride, x + j * xstride, xstride, n, out + j * out_stride, out_stride);
}

template <class K>
void Tile(const void* weight, size_t row_stride, int64_t n_rows, const void* act, size_t act_stride, int64_t n_act,
          int64_t n, float* out, int64_t out_stride) {
  SF_CHECK(n % kQK_K == 0, "dot of %lld elements: not whole super-blocks", static_cast<long long>(n));
  const auto* w = static_cast<const uint8_t*>(weight);
  const auto* x = static_cast<const uint8_t*>(act);
  int64_t r = 0;
  for (; r + kTileR <= n_rows; r += kTileR)
    TileRows<K, kTileR>(w + r * row_stride, row_stride, x, act_stride, n_act, n, out + r, out_stride);
  for (; r < n_rows; ++r) TileRows<K, 1>(w + r * row_stride, row_stride, x, act_stride, n_act, n, out + r, out_stride);
}

DotTile GetTileK(GgmlType weight_type, GgmlType activation_type) {
  if (activation_type != GgmlType::Q8_K) return DotTile{};
  switch (weight_type) {
    case GgmlType::Q2_K:
#if HWY_TARGET == HWY_AVX3_DL
      return DotTile{&VnniK16TileRun<VnniQ2K>, &VnniK16PreparedBytes, &VnniK16Prepare, kVnniK2MinRows,
                     &VnniK16SmallRun<VnniQ2K>};  // as Q4_K
#else
      return DotTile{&Tile<K16Kernel<Q2KFormat> >};
#endif
    case GgmlType::Q3_K:
#if HWY_TARGET == HWY_AVX3_DL
      return DotTile{&VnniK16TileRun<VnniQ3K>, &VnniK16PreparedBytes, &VnniK16Prepare, kVnniK3MinRows,
                     &VnniK16SmallRun<VnniQ3K>};  // as Q4_K
#else
      return DotTile{&Tile<K16Kernel<Q3KFormat> >};
#endif
    case GgmlType::Q4_K:
#if HWY_TARGET == HWY_AVX3_DL
      // This target's Q4_K dot is the VNNI chain, which only the VNNI tile matches; a panel
      // computes 16 activation rows whatever the batch, so small batches use dot_rows.
      return DotTile{&VnniK4TileRun<BlockQ4_K>, &VnniK4PreparedBytes, &VnniK4Prepare, kVnniMinRows};
#else
      return DotTile{&Tile<K4Kernel<false, BlockQ4_K> >};
#endif
    case GgmlType::Q5_K:
#if HWY_TARGET == HWY_AVX3_DL
      return DotTile{&VnniK4TileRun<BlockQ5_K>, &VnniK4PreparedBytes, &VnniK4Prepare, kVnniMinRows};  // as Q4_K
#else
      return DotTile{&Tile<K4Kernel<true, BlockQ5_K> >};
#endif
    case GgmlType::Q6_K:
#if HWY_TARGET == HWY_AVX3_DL
      return DotTile{&VnniK16TileRun<VnniQ6K>, &VnniK16PreparedBytes, &VnniK16Prepare, kVnniK6MinRows,
                     &VnniK16SmallRun<VnniQ6K>};  // as Q4_K
#else
      return DotTile{&Tile<K16Kernel<Q6KFormat> >};
#endif
    default:
      return DotTile{};
  }
}

#else  // HWY_SCALAR: no tiles; matmul uses the reference dot kernels row by row.

DotTile GetTileK(GgmlType, GgmlType) { return DotTile{}; }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf::quant {

HWY_EXPORT(GetTileK);

DotTile k_dot_tile(GgmlType weight_type, GgmlType activation_type, int64_t target) {
  return pick_target(HWY_DISPATCH_TABLE(GetTileK), target)(weight_type, activation_type);
}

}  // namespace sf::quant
#endif  // HWY_ONCE
