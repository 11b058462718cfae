#include "gguf/gguf_value.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "base/check.h"

namespace sf::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
      return "u8";
    case ValueType::kInt8:
      return "i8";
    case ValueType::kUint16:
      return "u16";
    case ValueType::kInt16:
      return "i16";
    case ValueType::kUint32:
      return "u32";
    case ValueType::kInt32:
      return "i32";
    case ValueType::kFloat32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "str";
    case ValueType::kArray:
      return "arr";
    case ValueType::kUint64:
      return "u64";
    case ValueType::kInt64:
      return "i64";
    case ValueType::kFloat64:
      return "f64";
  }
  return "?";
}

bool is_valid_value_type(uint32_t raw) { return raw <= static_cast<uint32_t>(ValueType::kFloat64); }

bool Value::is_integer() const {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kUint16:
    case ValueType::kInt16:
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kUint64:
    case ValueType::kInt64:
      return true;
    default:
      return false;
  }
}

int64_t Value::as_int() const {
  if (auto* u = std::get_if<uint64_t>(&data)) return static_cast<int64_t>(*u);
  if (auto* i = std::get_if<int64_t>(&data)) return *i;
  if (auto* d = std::get_if<double>(&data)) {
    // A float outside int64's range (or NaN) in a corrupt file: converting it would be
    // undefined behaviour, so saturate; callers range-check the result anyway.
    if (std::isnan(*d)) return 0;
    if (*d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
    if (*d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(*d);
  }
  if (auto* b = std::get_if<bool>(&data)) return *b ? 1 : 0;
  SF_CHECK(false, "metadata value of type %s is not numeric", value_type_name(type));
  return 0;
}

double Value::as_double() const {
  if (auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
  if (auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&data)) return *d;
  if (auto* b = std::get_if<bool>(&data)) return *b ? 1.0 : 0.0;
  SF_CHECK(false, "metadata value of type %s is not numeric", value_type_name(type));
  return 0;
}

std::string Value::to_display_string(size_t max_items) const {
  char buf[64];
  switch (type) {
    case ValueType::kString: {
      std::string s = as_string();
      if (s.size() > 80) s = s.substr(0, 77) + "...";
      for (auto& c : s)
        if (c == '\n') c = ' ';
      return "\"" + s + "\"";
    }
    case ValueType::kBool:
      return std::get<bool>(data) ? "true" : "false";
    case ValueType::kFloat32:
    case ValueType::kFloat64:
      std::snprintf(buf, sizeof(buf), "%g", as_double());
      return buf;
    case ValueType::kArray: {
      const Array& a = as_array();
      std::string out =
          "[" + std::string(value_type_name(a.element_type)) + " x " + std::to_string(a.items.size()) + "]";
      if (!a.items.empty()) {
        out += " ";
        for (size_t i = 0; i < a.items.size() && i < max_items; ++i)
          out += (i ? ", " : "") + a.items[i].to_display_string(max_items);
        if (a.items.size() > max_items) out += ", ...";
      }
      return out;
    }
    default:
      if (std::holds_alternative<uint64_t>(data)) return std::to_string(std::get<uint64_t>(data));
      return std::to_string(as_int());
  }
}

}  // namespace sf::gguf
