// qwen2: Qwen 1.5/2/2.5. Biases on the q, k and v projections; NeoX-mode RoPE (rotates
// dimension i with i + n_rot/2).
#include "model/architecture.h"

namespace sf {
const ArchitectureTraits& qwen2_traits() {
  static const ArchitectureTraits t{Arch::kQwen2, "qwen2", RopeMode::kNeox, true, false};
  return t;
}
}  // namespace sf
