// Rotary position embedding applied in place to one head vector.
//
// Normal mode (llama) rotates adjacent pairs (x[2i], x[2i+1]); NeoX mode (qwen2, qwen3)
// rotates (x[i], x[i + n_rot/2]). Angles follow ggml's recurrence (theta multiplied by
// base^(-2/n_rot) each pair, in float) so results match llama.cpp bit for bit where the
// rest of the arithmetic does. `freq_factors` (Llama 3 long-context scaling, tensor
// rope_freqs.weight) divides each pair's angle; nullptr for none.
#pragma once

#include <cstdint>

namespace sf {

enum class RopeMode { kNormal, kNeox };

struct RopeParams {
  RopeMode mode = RopeMode::kNormal;
  int n_rot = 0;  // rotated dimensions (<= head_dim)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;              // linear scaling: position multiplied by this
  const float* freq_factors = nullptr;  // [n_rot / 2] or nullptr
};

// Precomputes cos/sin for one position: cs[2*i] = cos, cs[2*i+1] = sin, i < n_rot/2.
void rope_cos_sin(const RopeParams& p, int32_t position, float* cs);
// Rotates one head (head_dim floats) using precomputed cos/sin.
void rope_apply(const RopeParams& p, const float* cs, float* head);

}  // namespace sf
