// SIMD helpers for attention, with runtime dispatch (Google Highway).
#pragma once

#include <cstdint>

namespace sf {

// acc[d] += p * half_to_float(v[d]) for d < n. Vectorised over d only, so the order in which
// cells are accumulated into acc stays the caller's (rows stay batch-invariant).
void axpy_f16(float p, const uint16_t* v, float* acc, int64_t n);

}  // namespace sf
