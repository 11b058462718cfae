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
// vocabularies of 150K tokens. A draft step of stories260K's draft spent ~3 us of ~12 here
// in scalar exp over 512 tokens; over Llama 3's 128K tokens it would be ~0.5 ms a step.
float exp_sum_shifted(const float* x, int64_t n, float shift);
// The scalar oracle (std::exp, summed in double).
double exp_sum_shifted_ref(const float* x, int64_t n, float shift);
// In-place softmax over n values; -inf entries get probability 0. Sum in double.
void softmax_inplace(float* x, int64_t n);
}  // namespace sf
