#include "ops/activation.h"

#include <cmath>
#include <limits>

namespace sf {

void swiglu_inplace(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void softmax_inplace(float* x, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = x[i] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(x[i] - max);
    x[i] = e;
    sum += e;
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace sf
