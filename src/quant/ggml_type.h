// Weight and activation storage types, numbered exactly as GGUF/ggml number them (the
// numbers are stored in files). Block layouts follow ggml's so real GGUF files load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sf {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,  // activation format for Q4_1/Q5_1 dot products
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,  // activation format for the K-quant dot products
  BF16 = 30,
};

struct TypeInfo {
  GgmlType type;
  const char* name;     // "Q4_K", as llama.cpp prints it
  int64_t block_size;   // elements per block (1 for F32/F16/BF16)
  size_t block_bytes;   // bytes per block
  bool is_weight_type;  // may appear as a weight in a model this engine runs
};

// nullptr when the raw number is not a type this engine knows.
const TypeInfo* find_type_info(uint32_t raw_type);
const TypeInfo& type_info(GgmlType type);
const char* type_name(GgmlType type);
// Case-insensitive ("q4_k", "Q8_0", "f16").
std::optional<GgmlType> type_from_name(std::string_view name);

// Bytes of n elements; n must be a multiple of the block size (SF_CHECKed).
size_t row_bytes(GgmlType type, int64_t n);

}  // namespace sf
