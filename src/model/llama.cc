// llama: Llama 2/3, TinyLlama, SmolLM, Mistral. Normal-mode RoPE on adjacent pairs (GGUF
// converters permute q/k weights so this is correct), no biases; Llama 3.1 long-context
// scaling arrives as an optional rope_freqs.weight tensor.
#include "model/architecture.h"

namespace sf {
const ArchitectureTraits& llama_traits() {
  static const ArchitectureTraits t{Arch::kLlama, "llama", RopeMode::kNormal, false, false};
  return t;
}
}  // namespace sf
