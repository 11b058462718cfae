// Writing a GGUF v3 file: metadata in insertion order, then tensors, each aligned to
// general.alignment (32 by default). Used by quantize, synth and pack. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_value.h"
#include "quant/ggml_type.h"

namespace sf::gguf {

class GgufWriter {
 public:
  // Sets (or replaces, keeping its position) a metadata key.
  void set(const std::string& key, Value value);
  void remove(const std::string& key);
  // Copies every metadata entry of another file (e.g. the vocabulary of a model).
  void copy_metadata_from(const GgufFile& file, const std::string& key_prefix = "");

  // Adds a tensor whose bytes are provided now (the writer keeps a copy).
  void add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> dims, std::vector<uint8_t> data);

  // Writes the whole file; the file is written to path + ".tmp" and renamed, so a failed
  // write never leaves a half-written model under the final name.
  Status write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> dims;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace sf::gguf
