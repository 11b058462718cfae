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
// sum_i exp(x[i] - shift): a softmax's normaliser where only a few probabilities are
// needed (a draft's candidates out of the vocabulary). Vectorised with Highway's exp
// (within 1 ulp of std::exp per term), summed in f32 lanes; -inf entries add 0. With shift
// = max x every term is at most 1, so f32 sums stay within ~1e-6 of the double sum over
// vocabularies of 150K tokens. The scalar loop it replaced cost stories260K's draft ~1.7 us
// a step over 512 tokens (a chain:8 cycle drafted in 0.149 ms, now 0.135); at that rate
// Llama 3's 128K tokens would cost ~0.4 ms a step.
float exp_sum_shifted(const float* x, int64_t n, float shift);
// The scalar oracle (std::exp, summed in double).
double exp_sum_shifted_ref(const float* x, int64_t n, float shift);
// In-place softmax over n values; -inf entries get probability 0. Sum in double.
void softmax_inplace(float* x, int64_t n);
}  // namespace sf
