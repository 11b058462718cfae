#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

namespace sf::train {

void AdamW::step(float* params, const float* grad, float lr, const std::vector<uint8_t>& decay_mask) {
  ++t_;
  const double bc1 = 1.0 - std::pow(static_cast<double>(config_.beta1), static_cast<double>(t_));
  const double bc2 = 1.0 - std::pow(static_cast<double>(config_.beta2), static_cast<double>(t_));
  const float b1 = config_.beta1, b2 = config_.beta2;
  const int64_t n = static_cast<int64_t>(m_.size());
  for (int64_t i = 0; i < n; ++i) {
    m_[i] = b1 * m_[i] + (1.0f - b1) * grad[i];
    v_[i] = b2 * v_[i] + (1.0f - b2) * grad[i] * grad[i];
    const float mhat = static_cast<float>(m_[i] / bc1);
    const float vhat = static_cast<float>(v_[i] / bc2);
    if (decay_mask.empty() || decay_mask[i]) params[i] -= lr * config_.weight_decay * params[i];
    params[i] -= lr * mhat / (std::sqrt(vhat) + config_.eps);
  }
}

float cosine_lr(int64_t step, int64_t total, int64_t warmup, float peak, float min_lr) {
  if (warmup > 0 && step < warmup) return peak * static_cast<float>(step + 1) / static_cast<float>(warmup);
  const int64_t span = std::max<int64_t>(1, total - warmup - 1);
  const double progress = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(span));
  return static_cast<float>(min_lr + 0.5 * (peak - min_lr) * (1.0 + std::cos(3.141592653589793 * progress)));
}

double clip_grad_norm(float* grad, int64_t n, double max_norm) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(grad[i]) * grad[i];
  const double norm = std::sqrt(ss);
  if (max_norm > 0 && norm > max_norm) {
    const float s = static_cast<float>(max_norm / (norm + 1e-12));
    for (int64_t i = 0; i < n; ++i) grad[i] *= s;
  }
  return norm;
}

}  // namespace sf::train
