// synthesize_model: writes a random-weight decoder model of any shape in a supported
// architecture (llama, qwen2, qwen3), with the vocabulary of an existing GGUF, so that
// benchmarks at 1B-8B scale need no download (what `specflash synth` runs).
//
// Weights are deterministic in the seed (synth_random.h) and scaled to keep activations
// healthy through any depth: matrices ~ N(0, 1/fan_in) so each projection preserves the
// variance of its normalised input, token embeddings ~ N(0, 1/n_embd) so tied or untied
// logits have unit spread, norm weights ~ 1 +- 0.05, biases ~ N(0, 0.2^2). The result
// runs with varied, finite logits (tests/convert check a forward pass).
//
// Tensors are generated, quantised (with llama-quantize's per-tensor rules, see
// tensor_type_policy.h) and written one at a time, so memory stays around one tensor even
// for 8B F16. The vocabulary file's tokenizer.* metadata is copied and sets n_vocab.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "convert/quant_target.h"
#include "quant/ggml_type.h"

namespace sf {

struct SynthOptions {
  std::string arch = "llama";  // general.architecture: llama | qwen2 | qwen3
  std::string vocab_from;      // GGUF whose tokenizer.* metadata is copied
  std::string output_path;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;  // 0: n_head
  int n_ff = 0;
  int head_dim = 0;      // 0: n_embd / n_head
  int n_ctx = 4096;      // <arch>.context_length
  double rope_base = 0;  // 0: the architecture's usual base (llama 1e4, qwen 1e6)
  double rms_eps = 0;    // 0: llama 1e-5, qwen 1e-6
  bool tied = false;     // no output.weight; the LM head is token_embd
  QuantTarget type{GgmlType::F16};
  uint64_t seed = 0;
  std::string name;   // general.name; default "synth-<arch>-<embd>x<layers>-s<seed>"
  int n_threads = 0;  // 0: one per hardware thread
  bool show_progress = false;
};

// Checks the shape and options without touching any file; the first problem found.
Status validate_synth_options(const SynthOptions& options);

Status synthesize_model(const SynthOptions& options);

// How one synthetic tensor is initialised (exposed for tests).
struct SynthTensorSpec {
  std::string name;
  std::vector<int64_t> dims;  // ggml order
  float mean;                 // values are mean + stddev * normalish()
  float stddev;
};
// Every tensor of the model, in file order: token_embd, each layer's tensors, output_norm,
// output (unless tied). options must be valid.
std::vector<SynthTensorSpec> synth_tensor_specs(const SynthOptions& options, int64_t n_vocab);

}  // namespace sf
