// What the VNNI tiles of vnni_q-inl.h (the legacy formats), vnni_k-inl.h and vnni_k16-inl.h
// (the K-quants) share: panels of 16 activation rows, one per lane of a 512-bit vector, prepared once per matmul into
// 64-byte-aligned blocks, and the loop that runs a format's panel kernel over groups of
// weight rows and stores each lane to its activation row's output.
#if defined(SF_QUANT_VNNI_PANELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_VNNI_PANELS_INL_H_
#undef SF_QUANT_VNNI_PANELS_INL_H_
#else
#define SF_QUANT_VNNI_PANELS_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // used only in the AVX3_DL pass below
#endif

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL

inline constexpr int kPanel = 16;
// A panel computes 16 lanes whatever the batch: below this many activation rows the one-row
// kernel once per row is faster (attention_bench model, 1.1B Q4_0), and bit-identical.
inline constexpr int64_t kVnniMinRows = 4;

// Fetches the whole block kAhead blocks after `block` into the cache: the VNNI kernels
// stream their weights from DRAM, and this keeps more lines in flight than the hardware
// prefetcher does. Past the end of an array it fetches what follows (or nothing useful);
// a prefetch never faults.
template <int64_t kAhead, class Block>
HWY_INLINE void PrefetchBlockAhead(const Block* block) {
  const auto* ahead = reinterpret_cast<const char*>(block + kAhead);
  for (size_t o = 0; o < sizeof(Block); o += 64) hwy::Prefetch(ahead + o);
}

inline int64_t PanelCount(int64_t n_act) { return (n_act + kPanel - 1) / kPanel; }

// Bytes for the panels of n_act rows of `blocks` blocks each, plus slack for the alignment.
inline size_t PreparedPanelBytes(int64_t n_act, int64_t blocks, size_t block_bytes) {
  return static_cast<size_t>(PanelCount(n_act) * blocks) * block_bytes + 64;
}

// The first 64-byte boundary of a prepared buffer, where its panel blocks start.
template <class PanelBlock>
inline PanelBlock* AlignedPanelBlocks(const void* prepared) {
  static_assert(sizeof(PanelBlock) % 64 == 0, "panel blocks are whole cache lines");
  const uintptr_t p = reinterpret_cast<uintptr_t>(prepared);
  return reinterpret_cast<PanelBlock*>((p + 63) & ~uintptr_t{63});
}

// Lays n_act activation rows (act_stride bytes apart, blocks of ActBlock) out as panels:
// for every panel and block, a zeroed PanelBlock, then fill(panel_block, c, activation
// block) for each row c of the panel that the batch has. Rows past n_act stay zeros (their
// lanes compute zeros and are not stored).
template <class PanelBlock, class ActBlock, class Fill>
HWY_INLINE void PreparePanels(const void* act, size_t act_stride, int64_t n_act, int64_t blocks, void* prepared,
                              const Fill& fill) {
  PanelBlock* out = AlignedPanelBlocks<PanelBlock>(prepared);
  for (int64_t p = 0; p < PanelCount(n_act); ++p) {
    for (int64_t b = 0; b < blocks; ++b) {
      PanelBlock& pb = out[p * blocks + b];
      std::memset(&pb, 0, sizeof(pb));
      for (int c = 0; c < kPanel && p * kPanel + c < n_act; ++c) {
        const auto* row = static_cast<const uint8_t*>(act) + static_cast<size_t>(p * kPanel + c) * act_stride;
        fill(pb, c, reinterpret_cast<const ActBlock*>(row)[b]);
      }
    }
  }
}

// Calls panel(std::integral_constant<int, R>, r, p, lanes) for weight rows r..r+R-1 (groups
// of four, then single rows) against panel p, and stores lane c of lanes[k] to
// out[(16p + c) * out_stride + r + k] for the rows the batch has.
template <class PanelFn>
HWY_INLINE void ForEachPanel(int64_t n_rows, int64_t n_act, float* out, int64_t out_stride, const PanelFn& panel) {
  constexpr int kRows = 4;
  const auto store = [&](const __m512* lanes_of_rows, int rows, int64_t r, int64_t p) HWY_ATTR {
    for (int k = 0; k < rows; ++k) {
      HWY_ALIGN float lanes[kPanel];
      _mm512_store_ps(lanes, lanes_of_rows[k]);
      for (int c = 0; c < kPanel && p * kPanel + c < n_act; ++c) out[(p * kPanel + c) * out_stride + r + k] = lanes[c];
    }
  };
  int64_t r = 0;
  for (; r + kRows <= n_rows; r += kRows) {
    for (int64_t p = 0; p < PanelCount(n_act); ++p) {
      __m512 lanes[kRows];
      panel(std::integral_constant<int, kRows>{}, r, p, lanes);
      store(lanes, kRows, r, p);
    }
  }
  for (; r < n_rows; ++r) {
    for (int64_t p = 0; p < PanelCount(n_act); ++p) {
      __m512 lanes[1];
      panel(std::integral_constant<int, 1>{}, r, p, lanes);
      store(lanes, 1, r, p);
    }
  }
}

#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_VNNI_PANELS_INL_H_ toggle
