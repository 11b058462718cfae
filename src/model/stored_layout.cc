#include "model/stored_layout.h"

#include <charconv>

#include "model/model_weights.h"

namespace sf {

std::string row_panel_tensor_name(std::string_view gguf_name) {
  return std::string(gguf_name) + std::string(kRowPanelTensorSuffix);
}

bool is_row_panel_tensor_name(std::string_view stored_name) {
  return stored_name.size() > kRowPanelTensorSuffix.size() &&
         stored_name.substr(stored_name.size() - kRowPanelTensorSuffix.size()) == kRowPanelTensorSuffix;
}

std::string_view gguf_name_of_stored(std::string_view stored_name) {
  if (!is_row_panel_tensor_name(stored_name)) return stored_name;
  return stored_name.substr(0, stored_name.size() - kRowPanelTensorSuffix.size());
}

StoredMatrix find_stored_matrix(const gguf::GgufFile& file, const std::string& gguf_name) {
  if (const gguf::TensorInfo* t = file.find_tensor(gguf_name)) return {t, WeightLayout::kRows};
  if (const gguf::TensorInfo* t = file.find_tensor(row_panel_tensor_name(gguf_name)))
    return {t, WeightLayout::kRowPanels};
  return {};
}

namespace {

// "blk.12.ffn_up.weight" is one of layer 12's matrices.
bool is_layer_matrix_name(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  int layer = -1;
  const char* first = name.data() + kPrefix.size();
  const auto [end, ec] = std::from_chars(first, name.data() + name.size(), layer);
  if (ec != std::errc() || end == first || layer < 0) return false;
  for (const std::string& matrix : layer_matrix_tensor_names(layer))
    if (matrix == name) return true;
  return false;
}

}  // namespace

bool can_store_as_row_panels(std::string_view gguf_name, GgmlType type, int64_t rows) {
  if (!has_row_panel_layout(type) || rows <= 0 || rows % kRowPanelRows != 0) return false;
  return gguf_name == "output.weight" || is_layer_matrix_name(gguf_name);
}

bool has_row_panel_tensors(const gguf::GgufFile& file) {
  for (const gguf::TensorInfo& t : file.tensors())
    if (is_row_panel_tensor_name(t.name)) return true;
  return false;
}

}  // namespace sf
