// AdamW with bias correction and decoupled weight decay, a cosine learning-rate schedule
// with linear warmup, and gradient clipping by global L2 norm. Deterministic: plain loops
// in a fixed order. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace sf::train {

struct AdamWConfig {
  float lr = 3e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.01f;
};

class AdamW {
 public:
  AdamW(const AdamWConfig& config, int64_t n_params) : config_(config), m_(n_params, 0.0f), v_(n_params, 0.0f) {}

  // One update with learning rate lr (from the schedule). decay_mask[i] != 0 selects the
  // parameters that get weight decay (matrices; norms are not decayed); empty = all.
  void step(float* params, const float* grad, float lr, const std::vector<uint8_t>& decay_mask);

  int64_t steps_taken() const { return t_; }
  // State for checkpoints.
  std::vector<float>& m() { return m_; }
  std::vector<float>& v() { return v_; }
  void set_steps_taken(int64_t t) { t_ = t; }

 private:
  AdamWConfig config_;
  std::vector<float> m_, v_;
  int64_t t_ = 0;
};

// lr at `step` (0-based) of `total`: linear warmup over `warmup` steps to peak, then cosine
// decay to min_lr at the last step.
float cosine_lr(int64_t step, int64_t total, int64_t warmup, float peak, float min_lr);

// Scales grad so that its global L2 norm is at most max_norm (no-op if max_norm <= 0).
// Returns the norm before clipping.
double clip_grad_norm(float* grad, int64_t n, double max_norm);

}  // namespace sf::train
