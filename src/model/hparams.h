// Model hyper-parameters, read from GGUF metadata (`<arch>.embedding_length`, ...) and
// the tensor shapes; never guessed from names or sizes. Unknown architectures and
// unsupported options (e.g. YaRN rope scaling) are Status errors.
#pragma once

#include <string>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "ops/rope.h"

namespace sf {

// The decoder-only families specflash runs. Each differs only in small, declared ways
// (see architecture.h), so one layer program serves all of them.
enum class Arch { kLlama, kQwen2, kQwen3 };

struct ModelHParams {
  Arch arch = Arch::kLlama;
  std::string arch_name;  // as in general.architecture
  int n_vocab = 0;
  int n_ctx_train = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;  // attention.key_length, default n_embd / n_head
  int n_ff = 0;
  float rms_eps = 1e-5f;
  RopeMode rope_mode = RopeMode::kNormal;
  int n_rot = 0;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;
  bool tied_output = false;  // LM head shares token_embd

  int q_dim() const { return n_head * head_dim; }
  int kv_dim() const { return n_head_kv * head_dim; }
};

Result<ModelHParams> read_hparams(const gguf::GgufFile& file);
const char* arch_display_name(Arch arch);

}  // namespace sf
