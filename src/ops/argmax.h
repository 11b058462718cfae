// The index of a float array's largest value, vectorised: greedy decoding and greedy
// verification take one per token (per visited tree row), over the whole vocabulary.
#pragma once

#include <cstdint>

namespace sf {

// The first index of the maximum of x[0..n) (ties to the lowest index), exactly as the
// scalar loop `if (x[i] > x[best]) best = i` from best = 0, NaN entries included (n >= 1).
// The scalar loop carries `best` from one element to the next (a load and a compare per
// element in one dependency chain); replacing it saved ~2 us of a ~25 us resident
// stories260K decode step over 512 tokens (46c758b, docs/kernels.md), and that loop's cost
// grows with the vocabulary (Llama 3: 128K).
int32_t argmax_f32(const float* x, int64_t n);
// The scalar loop above (the oracle).
int32_t argmax_f32_ref(const float* x, int64_t n);

}  // namespace sf
