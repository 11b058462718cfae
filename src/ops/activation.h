// Element-wise activations and softmax.
#pragma once

#include <cstdint>

namespace sf {
// gate[i] = silu(gate[i]) * up[i]   (SwiGLU; silu(x) = x / (1 + exp(-x))), vectorised with
// Highway's exp (within 1 ulp of std::exp). Element-wise: each element's value depends on
// its gate and up alone, never on n or its position, so any split of the rows (batch size,
// threads) gives the same floats.
void swiglu_inplace(float* gate, const float* up, int64_t n);
// The scalar oracle (std::exp).
void swiglu_inplace_ref(float* gate, const float* up, int64_t n);
// In-place softmax over n values; -inf entries get probability 0. Sum in double.
void softmax_inplace(float* x, int64_t n);
}  // namespace sf
