// Helpers shared by the tokenizer tests: loading the llama.cpp vocabularies in
// ../shared/vocab and reading their .inp/.out test vectors.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace sf::test {

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The vector format of llama.cpp's test-tokenizer-0: inputs separated by
// "\n__ggml_vocab_test__\n"; one line of space-separated ids per input.
struct VocabVector {
  std::string input;
  std::vector<int32_t> ids;
};

inline std::vector<VocabVector> read_vocab_vectors(const std::string& gguf_path) {
  const std::string raw = read_file_bytes(gguf_path + ".inp");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::ifstream out(gguf_path + ".out");
  std::vector<VocabVector> vectors;
  std::string line;
  size_t i = 0;
  while (std::getline(out, line)) {
    VocabVector v;
    v.input = i < inputs.size() ? inputs[i] : "";
    std::istringstream ls(line);
    int32_t id;
    while (ls >> id) v.ids.push_back(id);
    vectors.push_back(std::move(v));
    ++i;
  }
  EXPECT_EQ(inputs.size(), vectors.size()) << gguf_path;
  return vectors;
}

inline std::string vocab_path(const std::string& name) { return shared_path("vocab/ggml-vocab-" + name + ".gguf"); }

inline bool vocab_present(const std::string& name) { return std::filesystem::exists(vocab_path(name)); }

// Loads a vocabulary; fails the current test (and returns nullopt) on error.
inline std::optional<Tokenizer> load_vocab(const std::string& name) {
  auto file = gguf::GgufFile::open(vocab_path(name));
  if (!file.ok()) {
    ADD_FAILURE() << file.status().message();
    return std::nullopt;
  }
  auto tok = Tokenizer::from_gguf(*file);
  if (!tok.ok()) {
    ADD_FAILURE() << tok.status().message();
    return std::nullopt;
  }
  return std::move(tok).value();
}

inline std::string ids_to_string(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

}  // namespace sf::test
