// Reading a GGUF file (v2 and v3): header, metadata, and the tensor index with absolute
// file offsets. Tensor data is not read here; the weights/ module reads it (resident or
// streamed) using the offsets. Every structural problem is a Status error naming the file
// and what is wrong (bad magic, unsupported version, truncation, tensor past end of file,
// unknown tensor type, ...), never a crash.
//
// A GgufFile is immutable after open() and safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_value.h"
#include "quant/ggml_type.h"

namespace sf::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint32_t kDefaultAlignment = 32;

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] is the contiguous (row) dimension
  GgmlType type = GgmlType::F32;
  uint64_t relative_offset = 0;  // from the start of the data section, as stored
  uint64_t file_offset = 0;      // absolute offset in the file
  uint64_t n_bytes = 0;

  int64_t n_elements() const;
  int64_t rows() const;  // product of dims[1..]
  int64_t cols() const { return dims.empty() ? 1 : dims[0]; }
};

class GgufFile {
 public:
  static Result<GgufFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t file_size() const { return file_size_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }

  // Metadata, in file order for listing and by key for lookup.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  // Typed lookups: nullopt when absent or of an incompatible type.
  std::optional<std::string> get_string(const std::string& key) const;
  std::optional<int64_t> get_int(const std::string& key) const;
  std::optional<double> get_float(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  std::optional<std::vector<std::string>> get_string_array(const std::string& key) const;
  std::optional<std::vector<float>> get_float_array(const std::string& key) const;
  std::optional<std::vector<int64_t>> get_int_array(const std::string& key) const;
  std::string architecture() const { return get_string("general.architecture").value_or(""); }

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(const std::string& name) const;

  // Reads a tensor's raw bytes (for tools and small tensors; pread, page cache).
  Result<std::vector<uint8_t>> read_tensor_data(const TensorInfo& t) const;
  // Reads the tensor's t.n_bytes bytes into `dst` (which holds at least that many): for
  // callers that keep the data in their own typed buffer, without a second copy.
  Status read_tensor_into(const TensorInfo& t, void* dst) const;

 private:
  std::string path_;
  uint32_t version_ = 0;
  uint64_t file_size_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::map<std::string, size_t> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace sf::gguf
