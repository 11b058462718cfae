// How the kernel tables are assembled (internal to quant/): each implementation file hands
// out a static array of DotKernel; dot_kernel.cc merges them into the lookups of
// dot_kernel.h. SIMD lists come per Highway target (0 = best supported) and have
// quantize_activation == nullptr; dot_kernel.cc fills it from the same target's activation
// quantisers so a kernel never mixes instruction sets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant/dot_kernel.h"

namespace sf::quant {

struct KernelList {
  const DotKernel* data = nullptr;
  size_t size = 0;
};

using QuantizeFn = void (*)(const float* x, void* dst, int64_t n);

KernelList ref_dot_kernels();                   // dot_ref.cc
KernelList float_dot_kernels(int64_t target);   // dot_simd_float.cc
KernelList legacy_dot_kernels(int64_t target);  // dot_simd_q.cc
KernelList k_dot_kernels(int64_t target);       // dot_simd_k.cc

// SIMD Q8_0 / Q8_1 / Q8_K quantiser for a target (quantize_act_simd.cc), byte-identical to
// quantize_row; nullptr for other types, whose conversion stays scalar.
QuantizeFn simd_activation_quantizer(GgmlType type, int64_t target);

// Highway targets compiled into the SIMD files and supported by this CPU, best first.
std::vector<int64_t> compiled_simd_targets();

}  // namespace sf::quant
