// GgufStreamWriter: writes a GGUF v3 file whose tensor data arrives one tensor at a time,
// so converting or synthesising an 8B model never holds more than one tensor in memory
// (gguf::GgufWriter keeps every tensor's bytes until write()).
//
// Usage: set metadata and declare every tensor (name, type, shape), then begin() writes
// the header, then write_next_tensor() once per declared tensor in declaration order, then
// finish(). The output goes to path + ".tmp" and is renamed on finish(), so a failed or
// abandoned write (the destructor removes the temporary) never leaves a partial model
// under the final name. The layout (metadata in insertion order, tensor offsets aligned
// to general.alignment, 32 by default) is the same as gguf::GgufWriter's.
//
// Not thread-safe. Errors (I/O, wrong call order, a tensor of the wrong size) are Status.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_value.h"
#include "quant/ggml_type.h"

namespace sf {

class GgufStreamWriter {
 public:
  explicit GgufStreamWriter(std::string path);
  ~GgufStreamWriter();
  GgufStreamWriter(const GgufStreamWriter&) = delete;
  GgufStreamWriter& operator=(const GgufStreamWriter&) = delete;

  // Metadata, before begin(). set() replaces an existing key in place.
  void set(const std::string& key, gguf::Value value);
  void remove(const std::string& key);
  void copy_metadata_from(const gguf::GgufFile& file, const std::string& key_prefix = "");
  const gguf::Value* find(const std::string& key) const;

  // Declares the next tensor, before begin(). dims in ggml order (dims[0] = row length,
  // which must be a multiple of the type's block size). Returns its data size in bytes.
  uint64_t add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> dims);
  size_t tensor_count() const { return tensors_.size(); }

  // Creates path.tmp and writes magic, metadata and the tensor index.
  Status begin();
  // Appends the data of the next declared tensor; n_bytes must equal its size.
  Status write_next_tensor(const void* data, uint64_t n_bytes);
  // Checks every tensor was written, flushes, closes and renames to the final path.
  Status finish();

  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return pos_; }

 private:
  struct Declared {
    std::string name;
    GgmlType type;
    std::vector<int64_t> dims;
    uint64_t n_bytes;
  };
  Status write_bytes(const void* p, uint64_t n);
  Status pad_to_alignment();
  void discard();

  std::string path_;
  std::string tmp_path_;
  std::vector<std::pair<std::string, gguf::Value>> metadata_;
  std::vector<Declared> tensors_;
  uint64_t alignment_ = gguf::kDefaultAlignment;
  FILE* file_ = nullptr;
  std::vector<char> io_buffer_;
  size_t next_tensor_ = 0;
  uint64_t pos_ = 0;
  bool finished_ = false;
};

}  // namespace sf
