#include "quant/ggml_type.h"

#include <cctype>
#include <string>

#include "base/check.h"

namespace sf {
namespace {
// Sizes follow ggml's block structs: e.g. Q4_0 = fp16 scale + 16 bytes of nibbles.
constexpr TypeInfo kTypes[] = {
    {GgmlType::F32, "F32", 1, 4, true},
    {GgmlType::F16, "F16", 1, 2, true},
    {GgmlType::Q4_0, "Q4_0", 32, 2 + 16, true},
    {GgmlType::Q4_1, "Q4_1", 32, 2 + 2 + 16, true},
    {GgmlType::Q5_0, "Q5_0", 32, 2 + 4 + 16, true},
    {GgmlType::Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16, true},
    {GgmlType::Q8_0, "Q8_0", 32, 2 + 32, true},
    {GgmlType::Q8_1, "Q8_1", 32, 2 + 2 + 32, false},
    {GgmlType::Q2_K, "Q2_K", 256, 16 + 64 + 2 + 2, true},
    {GgmlType::Q3_K, "Q3_K", 256, 32 + 64 + 12 + 2, true},
    {GgmlType::Q4_K, "Q4_K", 256, 2 + 2 + 12 + 128, true},
    {GgmlType::Q5_K, "Q5_K", 256, 2 + 2 + 12 + 32 + 128, true},
    {GgmlType::Q6_K, "Q6_K", 256, 128 + 64 + 16 + 2, true},
    {GgmlType::Q8_K, "Q8_K", 256, 4 + 256 + 32, false},
    {GgmlType::BF16, "BF16", 1, 2, true},
};
}  // namespace

const TypeInfo* find_type_info(uint32_t raw_type) {
  for (const auto& t : kTypes)
    if (static_cast<uint32_t>(t.type) == raw_type) return &t;
  return nullptr;
}

const TypeInfo& type_info(GgmlType type) {
  const TypeInfo* info = find_type_info(static_cast<uint32_t>(type));
  SF_CHECK(info != nullptr, "unknown type %u", static_cast<unsigned>(type));
  return *info;
}

const char* type_name(GgmlType type) { return type_info(type).name; }

std::optional<GgmlType> type_from_name(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& t : kTypes)
    if (upper == t.name) return t.type;
  return std::nullopt;
}

size_t row_bytes(GgmlType type, int64_t n) {
  const TypeInfo& info = type_info(type);
  SF_CHECK(n % info.block_size == 0, "%lld elements is not a multiple of %s's block size", static_cast<long long>(n),
           info.name);
  return static_cast<size_t>(n / info.block_size) * info.block_bytes;
}

}  // namespace sf
