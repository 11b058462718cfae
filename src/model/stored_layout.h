// How a weight matrix is stored in a model file. Standard GGUF stores every matrix as rows;
// `specflash pack --row-panels` may store a layer's matrices (and an untied LM head) as row
// panels (quant/row_panels.h), so that a layer streamed from storage reaches the panel
// kernels as it was read, with no conversion per pass.
//
// Such a tensor is renamed "<GGUF name>.row_panels16": the bytes are not GGUF's rows, and a
// reader that does not know the layout (llama.cpp, older specflash) must fail on a missing
// tensor rather than compute with scrambled weights. Type, shape and byte count are GGUF's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gguf/gguf_file.h"
#include "quant/ggml_type.h"
#include "quant/row_panels.h"

namespace sf {

inline constexpr std::string_view kRowPanelTensorSuffix = ".row_panels16";

// "blk.0.attn_q.weight" -> "blk.0.attn_q.weight.row_panels16".
std::string row_panel_tensor_name(std::string_view gguf_name);
bool is_row_panel_tensor_name(std::string_view stored_name);
// The GGUF name a stored tensor stands for (the suffix removed; other names unchanged).
std::string_view gguf_name_of_stored(std::string_view stored_name);

// A matrix as the file stores it: its tensor (nullptr when absent) and layout.
struct StoredMatrix {
  const gguf::TensorInfo* info = nullptr;
  WeightLayout layout = WeightLayout::kRows;
};
// Finds the tensor of GGUF name `gguf_name` in either layout.
StoredMatrix find_stored_matrix(const gguf::GgufFile& file, const std::string& gguf_name);

// Whether `pack --row-panels` stores this tensor as panels: a layer's matrix or
// output.weight, of a type with the layout (every block-quantised one), whose rows fill
// whole panels.
// (token_embd is read one row per token and never converted.)
bool can_store_as_row_panels(std::string_view gguf_name, GgmlType type, int64_t rows);

// True when any tensor of the file is stored as row panels.
bool has_row_panel_tensors(const gguf::GgufFile& file);

}  // namespace sf
