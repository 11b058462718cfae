#include "ops/rope.h"

#include <cmath>

namespace sf {

void rope_cos_sin(const RopeParams& p, int32_t position, float* cs) {
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  float theta = static_cast<float>(position);
  for (int i = 0; i < p.n_rot / 2; ++i) {
    float t = p.freq_scale * theta;
    if (p.freq_factors) t /= p.freq_factors[i];
    cs[2 * i] = std::cos(t);
    cs[2 * i + 1] = std::sin(t);
    theta *= theta_scale;
  }
}

void rope_apply(const RopeParams& p, const float* cs, float* head) {
  const int half = p.n_rot / 2;
  for (int i = 0; i < half; ++i) {
    const float c = cs[2 * i], s = cs[2 * i + 1];
    const int a = p.mode == RopeMode::kNormal ? 2 * i : i;
    const int b = p.mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
    const float x0 = head[a], x1 = head[b];
    head[a] = x0 * c - x1 * s;
    head[b] = x0 * s + x1 * c;
  }
}

}  // namespace sf
