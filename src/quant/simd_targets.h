// Instruction-set selection shared by the quant/ SIMD translation units. Include this FIRST
// in every quant SIMD .cc (before hwy/foreach_target.h) so they compile the same targets.
//
// The kernels are written for fixed 128/256/512-bit vectors (lane counts are compile-time
// constants), so Arm SVE and RISC-V V (scalable vectors) are excluded: on those machines
// Highway picks NEON, which is what llama.cpp uses there as well.
#pragma once

#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128 | HWY_RVV)
#endif

#include <cstdint>

#include "hwy/targets.h"

namespace sf::quant {

// Returns the entry of a HWY_EXPORT table compiled for `target` (one HWY_* bit that this
// CPU supports and HWY_TARGETS contains), or for the best supported target when target == 0.
// The pointer is then called directly, without per-call dispatch.
template <typename Fn>
Fn pick_target(Fn const* table, int64_t target) {
#if HWY_IDE || ((HWY_TARGETS & (HWY_TARGETS - 1)) == 0)
  (void)target;
  return table[0];
#else
  if (target == 0) {
    hwy::ChosenTarget& chosen = hwy::GetChosenTarget();
    if (!chosen.IsInitialized()) chosen.Update(hwy::SupportedTargets());
    return table[chosen.GetIndex()];
  }
  const int64_t mask =
      (HWY_CHOSEN_TARGET_SHIFT(target) | HWY_CHOSEN_TARGET_MASK_SCALAR) & HWY_CHOSEN_TARGET_MASK_TARGETS;
  return table[hwy::Num0BitsBelowLS1Bit_Nonzero64(static_cast<uint64_t>(mask))];
#endif
}

}  // namespace sf::quant
