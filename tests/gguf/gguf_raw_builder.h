// RawGguf: builds GGUF bytes field by field, so tests can write files the real writer
// never would (unknown types, zero dims, misaligned offsets, absurd counts, truncation).
// Header-only test helper shared by the gguf and cli tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace sf::test {

class RawGguf {
 public:
  template <typename T>
  RawGguf& pod(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
    return *this;
  }
  RawGguf& u32(uint32_t v) { return pod(v); }
  RawGguf& u64(uint64_t v) { return pod(v); }
  RawGguf& str(const std::string& s) {
    u64(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  // magic "GGUF", version, tensor count, metadata count.
  RawGguf& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  RawGguf& kv_string(const std::string& key, const std::string& value) { return str(key).u32(8).str(value); }
  RawGguf& kv_u32(const std::string& key, uint32_t value) { return str(key).u32(4).u32(value); }
  RawGguf& tensor_info(const std::string& name, const std::vector<int64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (int64_t d : dims) pod<int64_t>(d);
    return u32(type).u64(offset);
  }
  RawGguf& pad_to(size_t alignment) {
    while (bytes.size() % alignment != 0) bytes.push_back(0);
    return *this;
  }
  RawGguf& zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }
  size_t size() const { return bytes.size(); }

  bool save(const std::string& path, size_t max_bytes = SIZE_MAX) const {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const size_t n = bytes.size() < max_bytes ? bytes.size() : max_bytes;
    const bool ok = std::fwrite(bytes.data(), 1, n, f) == n;
    return std::fclose(f) == 0 && ok;
  }

  std::vector<uint8_t> bytes;
};

}  // namespace sf::test
