// quantize_model: rewrites a GGUF model with its weight matrices converted to another type
// (what `specflash quantize` runs). Each matrix row is dequantised to f32 and re-encoded
// with the scalar reference quantisers (quant/dequantize.h), in parallel over rows; the
// per-tensor types follow llama-quantize's rules (tensor_type_policy.h): norms and biases
// are copied unchanged, the LM head gets Q6_K for block-quantised targets, the K-quant
// mixes give some attn_v/ffn_down layers more bits, and rows that a type's block does not
// divide fall back to a compatible type with a warning on stderr.
//
// Metadata is copied; general.file_type is set to llama.cpp's ftype for the target and
// general.quantization_version to 2. Tensors are streamed one at a time, so memory stays
// around one input plus one output tensor. The output is written to OUT.tmp and renamed,
// so a failure never leaves a partial file. OUT may equal IN.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "convert/quant_target.h"
#include "quant/ggml_type.h"

namespace sf {

struct QuantizeOptions {
  QuantMix mix = QuantMix::kMedium;         // K-quant mix (Q4_K_S vs Q4_K_M); ignored otherwise
  bool pure = false;                        // every matrix gets the target type (no mix, no Q6_K head)
  std::optional<GgmlType> output_type;      // LM head override
  std::optional<GgmlType> token_embd_type;  // token_embd override (untied models)
  int n_threads = 0;                        // 0: one per hardware thread
  bool show_progress = false;               // progress and summary on stderr
  bool verbose = false;                     // one line per tensor on stderr
};

// Errors: unreadable or corrupt input, a target that is not a weight type (Q8_K), I/O
// failures while writing.
Status quantize_model(const std::string& in, const std::string& out, GgmlType type, const QuantizeOptions& options);

}  // namespace sf
