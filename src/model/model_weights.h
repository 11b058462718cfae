// The tensors of a decoder model, bound by name and checked against the hyper-parameters.
//
// Matrices are WeightMatrix views (type, shape, data pointer); small vectors (norm weights,
// biases) are converted to f32 once at load and always stay in memory. A layer's matrix
// pointers may point into resident storage or, for streamed layers, into a stream buffer
// that the weights/ module fills (so the layer program never knows where weights live).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/status.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "ops/matmul.h"

namespace sf {

struct LayerWeights {
  WeightMatrix wq, wk, wv, wo;            // [n_embd -> q_dim], [n_embd -> kv_dim] x2, [q_dim -> n_embd]
  WeightMatrix ffn_gate, ffn_up, ffn_down;  // [n_embd -> n_ff] x2, [n_ff -> n_embd]
  const float* attn_norm = nullptr;       // [n_embd]
  const float* ffn_norm = nullptr;        // [n_embd]
  const float* bq = nullptr;              // [q_dim]  (qwen2)
  const float* bk = nullptr;              // [kv_dim] (qwen2)
  const float* bv = nullptr;              // [kv_dim] (qwen2)
  const float* q_norm = nullptr;          // [head_dim] (qwen3)
  const float* k_norm = nullptr;          // [head_dim] (qwen3)
};

// GGUF names of a layer's matrix tensors, in a fixed order (the streamer reads these).
std::vector<std::string> layer_matrix_tensor_names(int layer);

class ModelWeights {
 public:
  // Binds every tensor and reads all of them into memory.
  static Result<std::unique_ptr<ModelWeights>> load_resident(const gguf::GgufFile& file,
                                                             const ModelHParams& hp);

  WeightMatrix token_embd;           // [n_embd, n_vocab]: row per token
  WeightMatrix output;               // LM head [n_embd -> n_vocab]; == token_embd when tied
  const float* output_norm = nullptr;  // [n_embd]
  const float* rope_freqs = nullptr;   // [n_rot / 2] or nullptr
  std::vector<LayerWeights> layers;

  size_t resident_bytes() const { return storage_.size(); }

 private:
  AlignedBuffer storage_;                  // every matrix, 64-byte aligned, one allocation
  std::vector<std::vector<float>> vectors_;  // f32 copies of norms and biases
};

}  // namespace sf
