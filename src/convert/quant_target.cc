#include "convert/quant_target.h"

#include <cctype>

namespace sf {
namespace {

struct NamedTarget {
  const char* name;
  GgmlType type;
  QuantMix mix;
  uint32_t ftype;  // llama_ftype
};

// Bare K-quant names map to the _M mix, which is what llama.cpp users usually mean by
// "Q4_K" and what the reference Q4_K_M models in shared/ were made with. Q2_K and Q6_K
// have a single llama.cpp recipe each, so they carry kMedium as a placeholder.
constexpr NamedTarget kTargets[] = {
    {"F32", GgmlType::F32, QuantMix::kMedium, 0},
    {"F16", GgmlType::F16, QuantMix::kMedium, 1},
    {"BF16", GgmlType::BF16, QuantMix::kMedium, 32},
    {"Q4_0", GgmlType::Q4_0, QuantMix::kMedium, 2},
    {"Q4_1", GgmlType::Q4_1, QuantMix::kMedium, 3},
    {"Q5_0", GgmlType::Q5_0, QuantMix::kMedium, 8},
    {"Q5_1", GgmlType::Q5_1, QuantMix::kMedium, 9},
    {"Q8_0", GgmlType::Q8_0, QuantMix::kMedium, 7},
    {"Q2_K", GgmlType::Q2_K, QuantMix::kMedium, 10},
    {"Q3_K_S", GgmlType::Q3_K, QuantMix::kSmall, 11},
    {"Q3_K_M", GgmlType::Q3_K, QuantMix::kMedium, 12},
    {"Q3_K_L", GgmlType::Q3_K, QuantMix::kLarge, 13},
    {"Q4_K_S", GgmlType::Q4_K, QuantMix::kSmall, 14},
    {"Q4_K_M", GgmlType::Q4_K, QuantMix::kMedium, 15},
    {"Q5_K_S", GgmlType::Q5_K, QuantMix::kSmall, 16},
    {"Q5_K_M", GgmlType::Q5_K, QuantMix::kMedium, 17},
    {"Q6_K", GgmlType::Q6_K, QuantMix::kMedium, 18},
    // Aliases: the bare K-quant names.
    {"Q3_K", GgmlType::Q3_K, QuantMix::kMedium, 12},
    {"Q4_K", GgmlType::Q4_K, QuantMix::kMedium, 15},
    {"Q5_K", GgmlType::Q5_K, QuantMix::kMedium, 17},
};

// Mixes that have no distinct llama.cpp recipe collapse to kMedium so lookups match.
QuantMix canonical_mix(GgmlType type, QuantMix mix) {
  switch (type) {
    case GgmlType::Q3_K:
      return mix;
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
      return mix == QuantMix::kLarge ? QuantMix::kMedium : mix;
    default:
      return QuantMix::kMedium;
  }
}

const NamedTarget* find_target(const QuantTarget& t) {
  const QuantMix mix = canonical_mix(t.type, t.mix);
  for (const auto& n : kTargets)
    if (n.type == t.type && n.mix == mix) return &n;
  return nullptr;
}

}  // namespace

std::optional<QuantTarget> parse_quant_target(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& n : kTargets)
    if (upper == n.name) return QuantTarget{n.type, n.mix};
  return std::nullopt;
}

const char* supported_quant_target_list() {
  return "F32, F16, BF16, Q8_0, Q5_0, Q5_1, Q4_0, Q4_1, Q6_K, Q5_K (=Q5_K_M), Q5_K_S, "
         "Q4_K (=Q4_K_M), Q4_K_S, Q3_K (=Q3_K_M), Q3_K_S, Q3_K_L, Q2_K";
}

uint32_t llama_file_type(const QuantTarget& target) {
  const NamedTarget* n = find_target(target);
  return n ? n->ftype : 0;
}

std::string quant_target_name(const QuantTarget& target) {
  const NamedTarget* n = find_target(target);
  return n ? n->name : type_name(target.type);
}

bool is_block_quantized(GgmlType type) {
  return type != GgmlType::F32 && type != GgmlType::F16 && type != GgmlType::BF16;
}

}  // namespace sf
