// GGUF metadata values: the thirteen value types of GGUF v2/v3, including nested arrays.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace sf::gguf {

enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

const char* value_type_name(ValueType t);
bool is_valid_value_type(uint32_t raw);

struct Value;
struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

// One metadata value. Integers are kept in their widest signed/unsigned form and floats
// as double; `type` remembers the exact on-disk type so a writer round-trips it.
struct Value {
  ValueType type = ValueType::kUint8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

  static Value u8(uint8_t v) { return {ValueType::kUint8, uint64_t{v}}; }
  static Value u32(uint32_t v) { return {ValueType::kUint32, uint64_t{v}}; }
  static Value u64(uint64_t v) { return {ValueType::kUint64, v}; }
  static Value i32(int32_t v) { return {ValueType::kInt32, int64_t{v}}; }
  static Value i64(int64_t v) { return {ValueType::kInt64, v}; }
  static Value f32(float v) { return {ValueType::kFloat32, double{v}}; }
  static Value f64(double v) { return {ValueType::kFloat64, v}; }
  static Value boolean(bool v) { return {ValueType::kBool, v}; }
  static Value string(std::string v) { return {ValueType::kString, std::move(v)}; }
  static Value array(ValueType element_type, std::vector<Value> items) {
    return {ValueType::kArray, Array{element_type, std::move(items)}};
  }

  bool is_integer() const;
  bool is_float() const { return type == ValueType::kFloat32 || type == ValueType::kFloat64; }
  bool is_string() const { return type == ValueType::kString; }
  bool is_array() const { return type == ValueType::kArray; }
  // Numeric value as int64/double (integers, floats and bools convert); SF_CHECKs type.
  int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const { return std::get<std::string>(data); }
  const Array& as_array() const { return std::get<Array>(data); }
  // Human-readable short form for `specflash info` (arrays are summarised).
  std::string to_display_string(size_t max_items = 8) const;
};

}  // namespace sf::gguf
