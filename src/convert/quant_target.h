// What `specflash quantize` and `synth --type` produce: a base weight type plus, for the
// K-quants, llama.cpp's size mix (_S, _M, _L), and the llama_ftype number recorded in
// general.file_type so tools that read that key (llama.cpp's loader prints it) agree with
// llama-quantize's output for the same recipe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "quant/ggml_type.h"

namespace sf {

// llama.cpp's K-quant mixes. They differ in which sensitive tensors (attn_v, ffn_down,
// attn_output) get more bits; see tensor_type_policy.h. Ignored for non-K types.
enum class QuantMix { kSmall, kMedium, kLarge };

struct QuantTarget {
  GgmlType type = GgmlType::Q8_0;
  QuantMix mix = QuantMix::kMedium;
};

// Parses a type name, case-insensitive: ggml type names (F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1
// Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K; a bare K-quant means its _M mix, as in llama-quantize's
// usual choice) and llama.cpp ftype names (Q3_K_S/M/L, Q4_K_S/M, Q5_K_S/M). nullopt for
// anything else, including activation-only formats (Q8_1, Q8_K).
std::optional<QuantTarget> parse_quant_target(std::string_view name);

// The names parse_quant_target accepts, for error messages and --help.
const char* supported_quant_target_list();

// llama_ftype number for general.file_type (ALL_F32=0, MOSTLY_F16=1, Q4_0=2, Q4_1=3,
// Q8_0=7, Q5_0=8, Q5_1=9, Q2_K=10, Q3_K_S/M/L=11/12/13, Q4_K_S/M=14/15, Q5_K_S/M=16/17,
// Q6_K=18, BF16=32), checked against llama.h's llama_ftype enum.
uint32_t llama_file_type(const QuantTarget& target);

// "Q4_K_M", "Q8_0", "F16": the ftype-style name of a target.
std::string quant_target_name(const QuantTarget& target);

// True for the block-quantised types (everything except F32, F16, BF16).
bool is_block_quantized(GgmlType type);

}  // namespace sf
