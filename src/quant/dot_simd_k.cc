// SIMD dot kernels for the K-quants (Q2_K..Q6_K) with Q8_K activations. The arithmetic per
// super-block lives in k_traits-inl.h, shared with the tile kernels (dot_tile_k.cc) so that a
// batch computes the same floats as one row at a time.
#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/kernel_registry.h"
#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/dot_simd_k.cc"
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

// One weight row against one activation row: the shared super-block steps with R = C = 1
// (the tiles of dot_tile_k.cc run the same steps on more rows).
template <class F>
float DotK16(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const typename F::Block*>(wp);
  const auto* x = static_cast<const BlockQ8_K*>(xp);
  const float* f16 = fp16_table();
  AccK16 acc[1][1];
  ZeroK16(acc[0][0]);
  for (int64_t i = 0; i < n / kQK_K; ++i) StepK16<F, 1, 1>(&w, &x, i, f16, acc);
  return FinishK16(acc[0][0]);
}

template <bool kFiveBit, class Block>
float DotQ45K(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const Block*>(wp);
  const auto* x = static_cast<const BlockQ8_K*>(xp);
  const float* f16 = fp16_table();
  AccK4 acc[1][1];
  ZeroK4(acc[0][0]);
  for (int64_t i = 0; i < n / kQK_K; ++i) StepK4<kFiveBit, Block, 1, 1>(&w, &x, i, f16, acc);
  return FinishK4(acc[0][0]);
}

// The kernels proper; the entries below check n once.
template <float (*Dot)(const void*, const void*, int64_t)>
float CheckedDot(const void* w, const void* x, int64_t n) {
  SF_CHECK(n % kQK_K == 0, "dot of %lld elements: not whole super-blocks", static_cast<long long>(n));
  return Dot(w, x, n);
}

template <float (*Dot)(const void*, const void*, int64_t)>
void DotRows(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  SF_CHECK(n % kQK_K == 0, "dot of %lld elements: not whole super-blocks", static_cast<long long>(n));
  for (int64_t r = 0; r < n_rows; ++r) out[r] = Dot(static_cast<const uint8_t*>(w) + r * stride, x, n);
}

template <float (*Dot)(const void*, const void*, int64_t)>
constexpr DotKernel Entry(GgmlType w) {
  return DotKernel{w, GgmlType::Q8_K, nullptr, &CheckedDot<Dot>, &DotRows<Dot>};
}

#if HWY_TARGET == HWY_AVX3_DL
// Q4_K's and Q5_K's VNNI path (vnni_k-inl.h), which this target's tiles match bit for bit.
template <class Block>
float VnniK4Dot(const void* w, const void* x, int64_t n) {
  float out;
  VnniK4DotRowsT<Block, 1>(static_cast<const uint8_t*>(w), 0, static_cast<const BlockQ8_K*>(x), n / kQK_K, &out);
  return out;
}

template <class Block>
void VnniK4DotRows(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  SF_CHECK(n % kQK_K == 0, "dot of %lld elements: not whole super-blocks", static_cast<long long>(n));
  const auto* wp = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const BlockQ8_K*>(x);
  int64_t r = 0;
  // One row at a time: one sequential stream for the hardware prefetcher (four interleaved
  // rows measured 10% slower, 1.1B Q4_K_M decode).
  for (; r < n_rows; ++r) VnniK4DotRowsT<Block, 1>(wp + r * stride, stride, xb, n / kQK_K, out + r);
}
#define SF_Q4_K_ENTRY \
  DotKernel { G::Q4_K, G::Q8_K, nullptr, &CheckedDot<VnniK4Dot<BlockQ4_K>>, &VnniK4DotRows<BlockQ4_K> }
#define SF_Q5_K_ENTRY \
  DotKernel { G::Q5_K, G::Q8_K, nullptr, &CheckedDot<VnniK4Dot<BlockQ5_K>>, &VnniK4DotRows<BlockQ5_K> }

// Q2_K's, Q3_K's and Q6_K's VNNI path (vnni_k16-inl.h), which this target's tiles match bit
// for bit.
template <class F>
float VnniK16DotEntry(const void* w, const void* x, int64_t n) {
  return VnniK16Dot<F>(static_cast<const typename F::Block*>(w), static_cast<const BlockQ8_K*>(x), n / kQK_K);
}
#define SF_Q2_K_ENTRY Entry<VnniK16DotEntry<VnniQ2K>>(G::Q2_K)
#define SF_Q3_K_ENTRY Entry<VnniK16DotEntry<VnniQ3K>>(G::Q3_K)
#define SF_Q6_K_ENTRY Entry<VnniK16DotEntry<VnniQ6K>>(G::Q6_K)
#else
#define SF_Q2_K_ENTRY Entry<DotK16<Q2KFormat>>(G::Q2_K)
#define SF_Q3_K_ENTRY Entry<DotK16<Q3KFormat>>(G::Q3_K)
#define SF_Q4_K_ENTRY Entry<DotQ45K<false, BlockQ4_K>>(G::Q4_K)
#define SF_Q5_K_ENTRY Entry<DotQ45K<true, BlockQ5_K>>(G::Q5_K)
#define SF_Q6_K_ENTRY Entry<DotK16<Q6KFormat>>(G::Q6_K)
#endif

const DotKernel* GetKKernels(size_t* count) {
  using G = GgmlType;
  static constexpr DotKernel kKernels[] = {
      SF_Q2_K_ENTRY, SF_Q3_K_ENTRY, SF_Q4_K_ENTRY, SF_Q5_K_ENTRY, SF_Q6_K_ENTRY,
  };
#undef SF_Q2_K_ENTRY
#undef SF_Q3_K_ENTRY
#undef SF_Q4_K_ENTRY
#undef SF_Q5_K_ENTRY
#undef SF_Q6_K_ENTRY
  *count = std::size(kKernels);
  return kKernels;
}

#else  // HWY_SCALAR: the reference kernels are used.

const DotKernel* GetKKernels(size_t* count) {
  *count = 0;
  return nullptr;
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf::quant {

HWY_EXPORT(GetKKernels);

KernelList k_dot_kernels(int64_t target) {
  KernelList list;
  list.data = pick_target(HWY_DISPATCH_TABLE(GetKKernels), target)(&list.size);
  return list;
}

}  // namespace sf::quant
#endif  // HWY_ONCE
