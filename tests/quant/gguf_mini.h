// A minimal GGUF reader for the quant tests: tensor names, shapes, types and raw bytes. The
// tests use it to compare our quantiser with tensors llama-quantize wrote; it is deliberately
// independent of src/gguf so a bug there cannot hide one here (and vice versa).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace sf::test {

struct MiniTensor {
  std::vector<int64_t> dims;  // ggml order: dims[0] is the row length
  uint32_t type = 0;
  uint64_t offset = 0;  // from the start of the data section
};

class MiniGguf {
 public:
  explicit MiniGguf(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + path);
    bytes_.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (bytes_.size() < 24 || std::memcmp(bytes_.data(), "GGUF", 4) != 0) {
      throw std::runtime_error(path + " is not a GGUF file");
    }
    pos_ = 8;  // magic + version
    const uint64_t n_tensors = read<uint64_t>();
    const uint64_t n_kv = read<uint64_t>();
    uint64_t alignment = 32;
    for (uint64_t i = 0; i < n_kv; ++i) {
      const std::string key = read_string();
      const uint32_t type = read<uint32_t>();
      if (key == "general.alignment" && type == 4) {
        alignment = read<uint32_t>();
      } else {
        skip_value(type);
      }
    }
    for (uint64_t i = 0; i < n_tensors; ++i) {
      const std::string name = read_string();
      MiniTensor t;
      const uint32_t n_dims = read<uint32_t>();
      for (uint32_t d = 0; d < n_dims; ++d) t.dims.push_back(static_cast<int64_t>(read<uint64_t>()));
      t.type = read<uint32_t>();
      t.offset = read<uint64_t>();
      tensors_[name] = t;
    }
    data_start_ = (pos_ + alignment - 1) / alignment * alignment;
  }

  const std::map<std::string, MiniTensor>& tensors() const { return tensors_; }
  const uint8_t* data(const MiniTensor& t) const { return bytes_.data() + data_start_ + t.offset; }

 private:
  template <typename T>
  T read() {
    if (pos_ + sizeof(T) > bytes_.size()) throw std::runtime_error("truncated GGUF");
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string() {
    const uint64_t n = read<uint64_t>();
    if (pos_ + n > bytes_.size()) throw std::runtime_error("truncated GGUF");
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  void skip_value(uint32_t type) {
    static constexpr size_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type == 8) {
      read_string();
    } else if (type == 9) {
      const uint32_t elem = read<uint32_t>();
      const uint64_t n = read<uint64_t>();
      for (uint64_t i = 0; i < n; ++i) skip_value(elem);
    } else if (type < std::size(kSizes)) {
      pos_ += kSizes[type];
    } else {
      throw std::runtime_error("unknown GGUF value type");
    }
  }

  std::vector<uint8_t> bytes_;
  size_t pos_ = 0;
  size_t data_start_ = 0;
  std::map<std::string, MiniTensor> tensors_;
};

}  // namespace sf::test
