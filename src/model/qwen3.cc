// qwen3: no q/k/v biases; an RMSNorm over each head of q and k (weights of head_dim)
// before RoPE; NeoX-mode RoPE. head_dim is explicit (attention.key_length), often not
// n_embd / n_head.
#include "model/architecture.h"

namespace sf {
const ArchitectureTraits& qwen3_traits() {
  static const ArchitectureTraits t{Arch::kQwen3, "qwen3", RopeMode::kNeox, false, true};
  return t;
}
}  // namespace sf
