// Element-wise activations and softmax.
#pragma once

#include <cstdint>

namespace sf {
// gate[i] = silu(gate[i]) * up[i]   (SwiGLU; silu(x) = x / (1 + exp(-x)))
void swiglu_inplace(float* gate, const float* up, int64_t n);
// In-place softmax over n values; -inf entries get probability 0. Sum in double.
void softmax_inplace(float* x, int64_t n);
}  // namespace sf
