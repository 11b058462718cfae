// What distinguishes each supported decoder architecture. All three are pre-norm
// transformers with RMSNorm, rotary attention (GQA) and a SwiGLU FFN; they differ in RoPE
// pairing, q/k/v biases and per-head q/k normalisation. The per-architecture files
// (llama.cc, qwen2.cc, qwen3.cc) each declare one ArchitectureTraits; the shared layer
// program in transformer.cc reads these flags.
#pragma once

#include <string>

#include "model/hparams.h"

namespace sf {

struct ArchitectureTraits {
  Arch arch;
  const char* name;  // general.architecture value
  RopeMode rope_mode;
  bool qkv_bias;  // attn_q/k/v.bias tensors present (qwen2)
  bool qk_norm;   // attn_q_norm / attn_k_norm per-head RMSNorm before RoPE (qwen3)
};

const ArchitectureTraits& llama_traits();
const ArchitectureTraits& qwen2_traits();
const ArchitectureTraits& qwen3_traits();

const ArchitectureTraits* find_architecture(const std::string& name);
const ArchitectureTraits& architecture_traits(Arch arch);
std::string supported_architecture_list();

}  // namespace sf
