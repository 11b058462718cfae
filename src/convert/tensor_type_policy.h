// Which type each tensor of a model gets when it is quantised to a target: llama.cpp's
// llama-quantize rules (src/llama-quant.cpp, llama_tensor_get_type), restricted to the
// dense llama/qwen2/qwen3 tensors specflash runs, so a model quantised here has the same
// per-tensor types as one made by llama-quantize from the same source.
//
//  * Only matrices are converted: tensors whose name ends in "weight" and that have two or
//    more dimensions once trailing 1s are dropped (ggml_n_dims >= 2), except *_norm.weight.
//    Norms, biases and rope_freqs keep their stored type and bytes.
//  * The LM head (output.weight, or token_embd.weight when the output is tied to it) gets
//    Q6_K for every block-quantised target except Q8_0 (which stays Q8_0): the head is the
//    most quantisation-sensitive matrix and costs little. Q8_0 when its rows are not a
//    multiple of 256.
//  * The K-quant mixes give attn_v / ffn_down / attn_output more bits in some layers
//    (Q2_K, Q3_K_S/M/L, Q4_K_S/M, Q5_K_S/M), exactly as llama.cpp does for non-MoE models.
//  * A matrix whose row length is not a multiple of the chosen type's block size falls
//    back as llama.cpp does (Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0;
//    llama.cpp uses IQ4_NL for the first, which specflash does not implement) and to F16
//    when even that block size does not divide the row (see FallbackReport).
//  * F32 / F16 / BF16 targets convert every matrix to that type, with no mix.
//  * `pure` (llama-quantize --pure) gives every matrix the target type (still with the
//    row-length fallback).
// The functions are pure and thread-safe; a FallbackReport is not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convert/quant_target.h"
#include "quant/ggml_type.h"

namespace sf {

struct TensorTypeContext {
  QuantTarget target;
  bool pure = false;
  int n_layer = 1;                          // <arch>.block_count
  int n_gqa = 1;                            // head_count / head_count_kv (Q2_K gives attn_v more bits at >= 4)
  bool has_output = true;                   // output.weight exists (else token_embd is also the LM head)
  std::optional<GgmlType> output_type;      // override for the LM head
  std::optional<GgmlType> token_embd_type;  // override for token_embd (when not the LM head)
};

// True for the tensors that get converted; the rest are copied unchanged.
bool is_convertible_matrix(const std::string& name, const std::vector<int64_t>& dims);

struct TensorTypeChoice {
  GgmlType type;       // what the tensor gets
  GgmlType preferred;  // what the rules wanted; differs when the row length forced a fallback
  bool fell_back() const { return type != preferred; }
};

// The type for a convertible matrix (is_convertible_matrix must hold).
TensorTypeChoice choose_tensor_type(const TensorTypeContext& ctx, const std::string& name,
                                    const std::vector<int64_t>& dims);

// Collects row-length fallbacks and reports them as one warning per (wanted type, row
// length, substitute) group, so a model whose every matrix falls back says so in a few
// lines rather than hundreds.
class FallbackReport {
 public:
  void add(const std::string& name, int64_t row, const TensorTypeChoice& choice);
  // "Q4_K needs rows that are a multiple of 256: 25 tensors with rows of 64 use Q5_0
  // instead (token_embd.weight, blk.0.attn_q.weight, blk.0.attn_k.weight, ...)"
  std::vector<std::string> warnings() const;
  void log() const;  // each warning through SF_LOG_WARN

 private:
  struct Group {
    GgmlType preferred, type;
    int64_t row;
    std::vector<std::string> names;
  };
  std::vector<Group> groups_;
};

// The layer index in "blk.<N>.<...>" names, or -1.
int tensor_layer_index(const std::string& name);

}  // namespace sf
