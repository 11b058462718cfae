#include "ops/norm.h"

#include <cmath>

namespace sf {
void rms_norm(const float* x, const float* weight, float eps, int64_t n, float* y) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * weight[i];
}
}  // namespace sf
