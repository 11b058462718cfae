// Known answers from llama.cpp itself: shared/reference/models holds F32/F16 models and the
// same models quantised by llama-quantize (no importance matrix). Quantising the float
// tensors with quantize_row must give the very same bytes, and dequantize_row must decode
// both to the same floats. This pins the block layouts and the quantisers' rounding to
// llama.cpp's, beyond what self-consistency tests can show.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <vector>

#include "gguf_mini.h"
#include "quant/dequantize.h"
#include "quant/ggml_type.h"
#include "test_paths.h"

namespace sf {
namespace {

struct Pair {
  const char* source;     // float model
  const char* quantized;  // the same model after llama-quantize
};

constexpr Pair kPairs[] = {
    {"reference/models/synth-llama-tok512.gguf", "reference/models/synth-llama-tok512-Q4_0.gguf"},
    {"reference/models/synth-llama-tok512.gguf", "reference/models/synth-llama-tok512-Q8_0.gguf"},
    {"reference/models/synth-llama-tok512.gguf", "reference/models/synth-llama-tok512-Q6_K.gguf"},
    {"reference/models/synth-llama-tok512.gguf", "reference/models/synth-llama-tok512-Q4_K_M.gguf"},
    {"reference/models/synth-qwen2-gpt2.gguf", "reference/models/synth-qwen2-gpt2-Q4_0.gguf"},
    // Not the qwen3 pair: those files were written by a NumPy pipeline from the original fp32
    // weights (file_type 0), so the F16 file is not their source.
};

class LlamaCppMatch : public ::testing::TestWithParam<Pair> {};

TEST_P(LlamaCppMatch, QuantizedBytesEqualLlamaQuantize) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string src_path = test::shared_path(GetParam().source);
  const std::string q_path = test::shared_path(GetParam().quantized);
  if (!std::filesystem::exists(src_path) || !std::filesystem::exists(q_path)) {
    GTEST_SKIP() << "reference models not available";
  }
  const test::MiniGguf src(src_path), quant(q_path);
  int checked = 0;
  for (const auto& [name, qt] : quant.tensors()) {
    const auto* info = find_type_info(qt.type);
    ASSERT_NE(info, nullptr) << name;
    if (type_info(info->type).block_size == 1) continue;  // norms etc. stay float
    const auto it = src.tensors().find(name);
    ASSERT_NE(it, src.tensors().end()) << name;
    const test::MiniTensor& st = it->second;
    const GgmlType src_type = static_cast<GgmlType>(st.type);
    ASSERT_TRUE(src_type == GgmlType::F32 || src_type == GgmlType::F16) << name;
    ASSERT_EQ(st.dims, qt.dims) << name;

    const int64_t row = qt.dims[0];
    int64_t rows = 1;
    for (size_t d = 1; d < qt.dims.size(); ++d) rows *= qt.dims[d];
    const size_t src_row_bytes = row_bytes(src_type, row);
    const size_t q_row_bytes = row_bytes(info->type, row);
    std::vector<float> x(static_cast<size_t>(row)), got(x.size()), want(x.size());
    std::vector<uint8_t> ours(q_row_bytes);
    int64_t bad_rows = 0;
    for (int64_t r = 0; r < rows; ++r) {
      dequantize_row(src_type, src.data(st) + r * src_row_bytes, x.data(), row);
      quantize_row(info->type, x.data(), ours.data(), row);
      const uint8_t* theirs = quant.data(qt) + r * q_row_bytes;
      if (std::memcmp(ours.data(), theirs, q_row_bytes) != 0) {
        ++bad_rows;
        continue;
      }
      dequantize_row(info->type, ours.data(), got.data(), row);
      dequantize_row(info->type, theirs, want.data(), row);
      ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << name;
    }
    EXPECT_EQ(bad_rows, 0) << name << " (" << info->name << "): " << bad_rows << " of " << rows
                           << " rows differ from llama-quantize";
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

std::string pair_name(const ::testing::TestParamInfo<Pair>& info) {
  std::string name = std::filesystem::path(info.param.quantized).stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(ReferenceModels, LlamaCppMatch, ::testing::ValuesIn(kPairs), pair_name);

}  // namespace
}  // namespace sf
