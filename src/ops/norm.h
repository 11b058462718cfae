// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight. The mean is summed in double, as
// ggml does, so results match llama.cpp closely. In-place use (y == x) is allowed.
#pragma once

#include <cstdint>

namespace sf {
void rms_norm(const float* x, const float* weight, float eps, int64_t n, float* y);
}  // namespace sf
