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
  WeightMatrix wq, wk, wv, wo;              // [n_embd -> q_dim], [n_embd -> kv_dim] x2, [q_dim -> n_embd]
  WeightMatrix ffn_gate, ffn_up, ffn_down;  // [n_embd -> n_ff] x2, [n_ff -> n_embd]
  const float* attn_norm = nullptr;         // [n_embd]
  const float* ffn_norm = nullptr;          // [n_embd]
  const float* bq = nullptr;                // [q_dim]  (qwen2)
  const float* bk = nullptr;                // [kv_dim] (qwen2)
  const float* bv = nullptr;                // [kv_dim] (qwen2)
  const float* q_norm = nullptr;            // [head_dim] (qwen3)
  const float* k_norm = nullptr;            // [head_dim] (qwen3)
};

// GGUF names of a layer's matrix tensors, in a fixed order (the streamer reads these).
std::vector<std::string> layer_matrix_tensor_names(int layer);

// Weights are organised in units, the granularity of residency and streaming:
// unit l < n_layer is layer l's seven matrices; unit n_layer is the LM head (output.weight;
// when the head is tied to token_embd it is always resident with the embeddings).
class ModelWeights {
 public:
  // Binds every tensor (shapes checked) and loads the small f32 vectors and the token
  // embeddings. Matrices are not read yet: see load_units().
  static Result<std::unique_ptr<ModelWeights>> bind(const gguf::GgufFile& file, const ModelHParams& hp);
  // bind() + load every unit: the fully resident model.
  static Result<std::unique_ptr<ModelWeights>> load_resident(const gguf::GgufFile& file, const ModelHParams& hp);

  // Reads the units whose flag is set into resident memory (one allocation). Units not
  // loaded keep data == nullptr until a streamer supplies them. Call once.
  Status load_units(const std::vector<bool>& resident);

  const gguf::GgufFile& file() const { return *file_; }
  int n_units() const { return static_cast<int>(layers.size()) + 1; }
  int head_unit() const { return static_cast<int>(layers.size()); }
  bool head_is_tied() const { return tied_; }
  bool unit_resident(int unit) const { return unit_resident_[unit]; }
  bool fully_resident() const;
  // The GGUF tensors holding a unit's matrices (empty for a tied head).
  const std::vector<const gguf::TensorInfo*>& unit_tensors(int unit) const { return unit_tensors_[unit]; }
  // How the file stores each of unit_tensors(unit) (model/stored_layout.h). A matrix
  // stored as panels whose view has rows must be converted after each read of it.
  const std::vector<WeightLayout>& unit_stored_layouts(int unit) const { return unit_stored_layouts_[unit]; }
  uint64_t unit_bytes(int unit) const;
  // Matrices of units not resident (streamed) that the file stores as GGUF rows although
  // this CPU decodes them faster as row panels: `specflash pack --row-panels` would store
  // them so (resident ones are converted at load; a streamed one would be per read).
  int streamed_rows_with_panel_kernel() const;
  // Bytes always resident whatever the plan: token embeddings and the f32 vectors.
  uint64_t base_resident_bytes() const;

  WeightMatrix token_embd;             // [n_embd, n_vocab]: row per token
  WeightMatrix output;                 // LM head [n_embd -> n_vocab]; == token_embd when tied
  const float* output_norm = nullptr;  // [n_embd]
  const float* rope_freqs = nullptr;   // [n_rot / 2] or nullptr
  std::vector<LayerWeights> layers;

  // Matrix bytes resident now (base + loaded units).
  uint64_t resident_bytes() const { return base_resident_bytes() + storage_.size(); }

 private:
  const gguf::GgufFile* file_ = nullptr;
  bool tied_ = false;
  AlignedBuffer embd_storage_;               // token_embd
  AlignedBuffer storage_;                    // resident unit matrices, 64-byte aligned
  std::vector<std::vector<float>> vectors_;  // f32 copies of norms and biases
  uint64_t vector_bytes_ = 0;
  std::vector<std::vector<const gguf::TensorInfo*>> unit_tensors_;
  std::vector<std::vector<WeightMatrix*>> unit_matrices_;
  std::vector<std::vector<WeightLayout>> unit_stored_layouts_;
  std::vector<bool> unit_resident_;
};

}  // namespace sf
