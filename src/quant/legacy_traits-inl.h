// Per-target block decoders of the legacy 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0),
// shared by the one-activation-row kernels (dot_simd_q.cc) and the multi-row tile kernels
// (dot_tile_q.cc), which must decode identically to stay bit-identical. Re-included once per
// Highway target through foreach_target.h, hence the toggle guard.
#if defined(SF_QUANT_LEGACY_TRAITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SF_QUANT_LEGACY_TRAITS_INL_H_
#undef SF_QUANT_LEGACY_TRAITS_INL_H_
#else
#define SF_QUANT_LEGACY_TRAITS_INL_H_
#endif

#include "quant/block_types.h"
#include "quant/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sf::quant::HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

// Weight decoders: a block's 32 integer weights as kChunks int16 vectors, element order.
// kScale: the decoded weights are kScale times the true ones; every partial sum is then
// exactly kScale times too (a power of two commutes with rounding), so dividing the final
// sum by it gives the same float as unscaled weights would.
struct Q4_0Traits {
  using Block = BlockQ4_0;
  using XBlock = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static constexpr float kScale = kL16 == 32 ? 4096.0f : 1.0f;
  static HWY_INLINE void Load(const Block& b, V16* w) {
    if constexpr (kL16 == 32) {
      // Nibble q goes to the top four bits of its int16 lane (lanes 0..15 take the low
      // nibbles of qs, 16..31 the high ones) and flipping the top bit makes it (q - 8) * 4096:
      // three ops (widen, shift, and+xor fused into one ternary-logic op on AVX-512).
      const hn::Rebind<uint8_t, D16> d8;
      const DU16 du16;
      const auto both = hn::PromoteTo(du16, hn::LoadDup128(d8, b.qs));
      const auto shift = hn::Set(du16, 12) - hn::And(hn::ShiftRight<2>(hn::Iota(du16, 0)), hn::Set(du16, 4));
      const auto top = hn::And(both << shift, hn::Set(du16, 0xF000));
      w[0] = hn::BitCast(D16(), hn::Xor(top, hn::Set(du16, 0x8000)));
    } else {
      LoadNibbles16(b.qs, w);
#pragma GCC unroll 4
      for (size_t c = 0; c < kChunks; ++c) w[c] = w[c] - hn::Set(D16(), 8);
    }
  }
};
struct Q4_1Traits {
  static constexpr float kScale = 1.0f;
  using Block = BlockQ4_1;
  using XBlock = BlockQ8_1;
  static constexpr bool kHasMin = true;
  static HWY_INLINE void Load(const Block& b, V16* w) { LoadNibbles16(b.qs, w); }
};
// Q5: bit j of qh is the fifth bit of element j; LoadMaskBits maps it onto lane j.
struct Q5_0Traits {
  static constexpr float kScale = 1.0f;
  using Block = BlockQ5_0;
  using XBlock = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static HWY_INLINE void Load(const Block& b, V16* w) {
    LoadNibbles16(b.qs, w);
#pragma GCC unroll 4
    for (size_t c = 0; c < kChunks; ++c) {
      const auto high = hn::LoadMaskBits(D16(), b.qh + c * (kL16 / 8));
      w[c] = hn::IfThenElse(high, w[c], w[c] - hn::Set(D16(), 16));
    }
  }
};
struct Q5_1Traits {
  static constexpr float kScale = 1.0f;
  using Block = BlockQ5_1;
  using XBlock = BlockQ8_1;
  static constexpr bool kHasMin = true;
  static HWY_INLINE void Load(const Block& b, V16* w) {
    LoadNibbles16(b.qs, w);
#pragma GCC unroll 4
    for (size_t c = 0; c < kChunks; ++c) {
      const auto high = hn::LoadMaskBits(D16(), b.qh + c * (kL16 / 8));
      w[c] = hn::Or(w[c], hn::IfThenElseZero(high, hn::Set(D16(), 16)));
    }
  }
};
struct Q8_0Traits {
  static constexpr float kScale = 1.0f;
  using Block = BlockQ8_0;
  using XBlock = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static HWY_INLINE void Load(const Block& b, V16* w) {
#pragma GCC unroll 4
    for (size_t c = 0; c < kChunks; ++c) w[c] = LoadI8(b.qs + c * kL16);
  }
};

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SF_QUANT_LEGACY_TRAITS_INL_H_ toggle
