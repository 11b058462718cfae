#include "convert/tensor_type_policy.h"

#include <cstdlib>

#include "base/log.h"

namespace sf {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const std::string suf(suffix);
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// llama.cpp's choice of layers that get more bits in the _M mixes: the first and last
// eighth, and every third layer in between.
bool use_more_bits(int layer, int n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

bool is_lm_head(const TensorTypeContext& ctx, const std::string& name) {
  return name == "output.weight" || (!ctx.has_output && name == "token_embd.weight");
}

// The mix rules for one tensor, before the row-length check.
GgmlType preferred_type(const TensorTypeContext& ctx, const std::string& name, int64_t row) {
  const GgmlType base = ctx.target.type;
  if (is_lm_head(ctx, name)) {
    if (ctx.output_type) return *ctx.output_type;
    if (ctx.pure || !is_block_quantized(base)) return base;
    if (row % type_info(GgmlType::Q6_K).block_size != 0) return GgmlType::Q8_0;
    return base == GgmlType::Q8_0 ? GgmlType::Q8_0 : GgmlType::Q6_K;
  }
  if (name == "token_embd.weight") return ctx.token_embd_type.value_or(base);
  if (ctx.pure || !is_block_quantized(base)) return base;

  const QuantMix mix = ctx.target.mix;
  const bool q2 = base == GgmlType::Q2_K;
  const bool q3 = base == GgmlType::Q3_K;
  const bool q4 = base == GgmlType::Q4_K;
  const bool q5 = base == GgmlType::Q5_K;
  const int n_layer = ctx.n_layer > 0 ? ctx.n_layer : 1;
  const int layer = tensor_layer_index(name);

  if (contains(name, "attn_v.weight")) {
    if (q2) return ctx.n_gqa >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
    if (q3 && mix == QuantMix::kMedium) return layer < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
    if (q3 && mix == QuantMix::kLarge) return GgmlType::Q5_K;
    if ((q4 || q5) && mix == QuantMix::kMedium && use_more_bits(layer, n_layer)) return GgmlType::Q6_K;
    if (q4 && mix == QuantMix::kSmall && layer < 4) return GgmlType::Q5_K;
    return base;
  }
  if (contains(name, "ffn_down")) {
    if (q2) return GgmlType::Q3_K;
    if (q3 && mix == QuantMix::kMedium) return layer < n_layer / 16 ? GgmlType::Q5_K : GgmlType::Q4_K;
    if (q3 && mix == QuantMix::kLarge) return GgmlType::Q5_K;
    if ((q4 || q5) && mix == QuantMix::kMedium && use_more_bits(layer, n_layer)) return GgmlType::Q6_K;
    if (q4 && mix == QuantMix::kSmall && layer < n_layer / 8) return GgmlType::Q5_K;
    return base;
  }
  if (contains(name, "attn_output.weight")) {
    if (q2) return GgmlType::Q3_K;
    if (q3 && mix == QuantMix::kMedium) return GgmlType::Q4_K;
    if (q3 && mix == QuantMix::kLarge) return GgmlType::Q5_K;
    return base;
  }
  return base;
}

// llama.cpp's substitutes when a type's block does not divide the row.
GgmlType fallback_for(GgmlType type) {
  switch (type) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
      return GgmlType::Q4_0;
    case GgmlType::Q4_K:
      return GgmlType::Q5_0;
    case GgmlType::Q5_K:
      return GgmlType::Q5_1;
    case GgmlType::Q6_K:
      return GgmlType::Q8_0;
    default:
      return GgmlType::F16;
  }
}

}  // namespace

int tensor_layer_index(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  char* end = nullptr;
  const long v = std::strtol(name.c_str() + 4, &end, 10);
  if (end == name.c_str() + 4 || *end != '.' || v < 0) return -1;
  return static_cast<int>(v);
}

bool is_convertible_matrix(const std::string& name, const std::vector<int64_t>& dims) {
  if (!ends_with(name, "weight") || contains(name, "_norm.weight")) return false;
  // Dimensions count up to the last one > 1, as ggml_n_dims does: [n, 1] is a vector.
  size_t n_dims = dims.size();
  while (n_dims > 1 && dims[n_dims - 1] == 1) --n_dims;
  return n_dims >= 2;
}

TensorTypeChoice choose_tensor_type(const TensorTypeContext& ctx, const std::string& name,
                                    const std::vector<int64_t>& dims) {
  const int64_t row = dims.empty() ? 1 : dims[0];
  const GgmlType want = preferred_type(ctx, name, row);
  if (row % type_info(want).block_size == 0) return {want, want};
  GgmlType got = fallback_for(want);
  if (row % type_info(got).block_size != 0) got = GgmlType::F16;
  return {got, want};
}

void FallbackReport::add(const std::string& name, int64_t row, const TensorTypeChoice& choice) {
  if (!choice.fell_back()) return;
  for (Group& g : groups_)
    if (g.preferred == choice.preferred && g.type == choice.type && g.row == row) {
      g.names.push_back(name);
      return;
    }
  groups_.push_back({choice.preferred, choice.type, row, {name}});
}

std::vector<std::string> FallbackReport::warnings() const {
  constexpr size_t kNamesShown = 3;
  std::vector<std::string> out;
  for (const Group& g : groups_) {
    std::string names;
    for (size_t i = 0; i < g.names.size() && i < kNamesShown; ++i) names += (i ? ", " : "") + g.names[i];
    if (g.names.size() > kNamesShown) names += ", ...";
    out.push_back(std::string(type_name(g.preferred)) + " needs rows that are a multiple of " +
                  std::to_string(type_info(g.preferred).block_size) + ": " + std::to_string(g.names.size()) +
                  (g.names.size() == 1 ? " tensor" : " tensors") + " with rows of " + std::to_string(g.row) +
                  (g.names.size() == 1 ? " uses " : " use ") + type_name(g.type) + " instead (" + names + ")");
  }
  return out;
}

void FallbackReport::log() const {
  for (const std::string& w : warnings()) SF_LOG_WARN("%s", w.c_str());
}

}  // namespace sf
