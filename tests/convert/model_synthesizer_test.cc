// synthesize_model: determinism, shapes and metadata per architecture, weight statistics,
// and clear errors for bad shapes.
#include "convert/model_synthesizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf/gguf_file.h"
#include "gguf/per_test_scratch.h"
#include "model/hparams.h"
#include "quant/dequantize.h"
#include "test_paths.h"

namespace sf {
namespace {

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

SynthOptions small_options(const std::string& arch, const std::string& out) {
  SynthOptions o;
  o.arch = arch;
  o.vocab_from = sf::test::shared_path("models/stories260K.gguf");
  o.output_path = out;
  o.n_embd = 64;
  o.n_layer = 2;
  o.n_head = 4;
  o.n_head_kv = 2;
  o.n_ff = 96;
  o.n_ctx = 256;
  o.type = {GgmlType::F16};
  o.seed = 7;
  o.n_threads = 2;
  return o;
}

TEST(Synthesize, SameSeedSameBytesAnyThreadCount) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  SynthOptions a = small_options("llama", dir + "/a.gguf");
  a.type = *parse_quant_target("Q8_0");
  SynthOptions b = a;
  b.output_path = dir + "/b.gguf";
  b.n_threads = 1;
  SynthOptions c = a;
  c.output_path = dir + "/c.gguf";
  c.seed = 8;
  ASSERT_TRUE(synthesize_model(a).ok());
  ASSERT_TRUE(synthesize_model(b).ok());
  ASSERT_TRUE(synthesize_model(c).ok());
  const auto ba = file_bytes(a.output_path), bb = file_bytes(b.output_path), bc = file_bytes(c.output_path);
  ASSERT_GT(ba.size(), 10000u);
  EXPECT_EQ(ba, bb);
  ASSERT_EQ(ba.size(), bc.size());
  // A different seed changes the weights (not just the seed key in the metadata).
  auto fa = gguf::GgufFile::open(a.output_path);
  auto fc = gguf::GgufFile::open(c.output_path);
  ASSERT_TRUE(fa.ok() && fc.ok());
  for (const char* name : {"token_embd.weight", "blk.1.ffn_down.weight", "output.weight"})
    EXPECT_NE(*fa->read_tensor_data(*fa->find_tensor(name)), *fc->read_tensor_data(*fc->find_tensor(name))) << name;
  EXPECT_FALSE(std::filesystem::exists(a.output_path + ".tmp"));
}

struct ArchCase {
  const char* arch;
  bool tied;
  int head_dim;  // 0: default
};

class SynthesizeArch : public testing::TestWithParam<ArchCase> {};

TEST_P(SynthesizeArch, ShapesAndMetadataReadBack) {
  SF_SKIP_WITHOUT_SHARED();
  const ArchCase& c = GetParam();
  const std::string dir = sf::test::per_test_scratch_dir();
  SynthOptions o = small_options(c.arch, dir + "/m.gguf");
  o.tied = c.tied;
  o.head_dim = c.head_dim;
  o.rope_base = 500000;
  ASSERT_TRUE(synthesize_model(o).ok());
  auto f = gguf::GgufFile::open(o.output_path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->architecture(), c.arch);
  EXPECT_EQ(f->get_int("general.alignment"), 32);
  EXPECT_EQ(f->get_int("general.file_type"), 1);
  EXPECT_EQ(f->get_string("general.name"), std::string("synth-") + c.arch + "-64x2-s7");
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.tokens")->size(), 512u);
  EXPECT_TRUE(f->has("tokenizer.ggml.scores"));

  // The engine's own hparams reader sees the requested shape.
  auto hp = read_hparams(*f);
  ASSERT_TRUE(hp.ok()) << hp.status().message();
  const int head_dim = c.head_dim ? c.head_dim : 16;
  EXPECT_EQ(hp->n_vocab, 512);
  EXPECT_EQ(hp->n_embd, 64);
  EXPECT_EQ(hp->n_layer, 2);
  EXPECT_EQ(hp->n_head, 4);
  EXPECT_EQ(hp->n_head_kv, 2);
  EXPECT_EQ(hp->n_ff, 96);
  EXPECT_EQ(hp->head_dim, head_dim);
  EXPECT_EQ(hp->n_rot, head_dim);
  EXPECT_EQ(hp->n_ctx_train, 256);
  EXPECT_FLOAT_EQ(hp->rope_freq_base, 500000.0f);
  EXPECT_EQ(hp->tied_output, c.tied);
  EXPECT_EQ(f->has(std::string(c.arch) + ".attention.key_length"), c.head_dim != 0);

  const bool qwen2 = std::string(c.arch) == "qwen2", qwen3 = std::string(c.arch) == "qwen3";
  const size_t per_layer = 9 + (qwen2 ? 3 : 0) + (qwen3 ? 2 : 0);
  EXPECT_EQ(f->tensors().size(), 2 + (c.tied ? 0 : 1) + 2 * per_layer);
  auto dims = [&](const std::string& name) {
    const gguf::TensorInfo* t = f->find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    return t ? t->dims : std::vector<int64_t>{};
  };
  const int64_t q = 4 * head_dim, kv = 2 * head_dim;
  EXPECT_EQ(dims("token_embd.weight"), (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(dims("blk.1.attn_q.weight"), (std::vector<int64_t>{64, q}));
  EXPECT_EQ(dims("blk.1.attn_k.weight"), (std::vector<int64_t>{64, kv}));
  EXPECT_EQ(dims("blk.1.attn_v.weight"), (std::vector<int64_t>{64, kv}));
  EXPECT_EQ(dims("blk.1.attn_output.weight"), (std::vector<int64_t>{q, 64}));
  EXPECT_EQ(dims("blk.1.ffn_gate.weight"), (std::vector<int64_t>{64, 96}));
  EXPECT_EQ(dims("blk.1.ffn_down.weight"), (std::vector<int64_t>{96, 64}));
  EXPECT_EQ(dims("blk.0.attn_norm.weight"), (std::vector<int64_t>{64}));
  if (qwen2) {
    EXPECT_EQ(dims("blk.0.attn_q.bias"), (std::vector<int64_t>{q}));
    EXPECT_EQ(dims("blk.0.attn_v.bias"), (std::vector<int64_t>{kv}));
  }
  if (qwen3) {
    EXPECT_EQ(dims("blk.0.attn_q_norm.weight"), (std::vector<int64_t>{head_dim}));
    EXPECT_EQ(dims("blk.0.attn_k_norm.weight"), (std::vector<int64_t>{head_dim}));
  }
  EXPECT_EQ(f->find_tensor("output.weight") == nullptr, c.tied);
  for (const auto& t : f->tensors()) EXPECT_EQ(t.type, t.dims.size() == 1 ? GgmlType::F32 : GgmlType::F16) << t.name;
}

INSTANTIATE_TEST_SUITE_P(Archs, SynthesizeArch,
                         testing::Values(ArchCase{"llama", false, 0}, ArchCase{"llama", true, 0},
                                         ArchCase{"qwen2", true, 0}, ArchCase{"qwen3", false, 32}),
                         [](const testing::TestParamInfo<ArchCase>& info) {
                           return std::string(info.param.arch) + (info.param.tied ? "_tied" : "") +
                                  (info.param.head_dim ? "_headdim" : "");
                         });

TEST(Synthesize, WeightStatisticsAndQuantisedTypes) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  SynthOptions o = small_options("llama", dir + "/m.gguf");
  o.n_embd = 256;
  o.n_ff = 512;
  o.n_layer = 3;
  o.type = *parse_quant_target("Q4_K_M");
  ASSERT_TRUE(synthesize_model(o).ok());
  auto f = gguf::GgufFile::open(o.output_path);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->get_int("general.file_type"), 15);
  // llama-quantize's Q4_K_M choices for 3 layers, rows of 256.
  EXPECT_EQ(f->find_tensor("output.weight")->type, GgmlType::Q6_K);
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight")->type, GgmlType::Q4_K);
  EXPECT_EQ(f->find_tensor("blk.2.attn_v.weight")->type, GgmlType::Q6_K);
  EXPECT_EQ(f->find_tensor("blk.1.attn_v.weight")->type, GgmlType::Q4_K);
  EXPECT_EQ(f->find_tensor("blk.0.attn_norm.weight")->type, GgmlType::F32);

  auto stats = [&](const std::string& name) {
    const gguf::TensorInfo& t = *f->find_tensor(name);
    auto data = f->read_tensor_data(t);
    std::vector<float> v(t.n_elements());
    const size_t stride = row_bytes(t.type, t.cols());
    for (int64_t r = 0; r < t.rows(); ++r)
      dequantize_row(t.type, data->data() + r * stride, v.data() + r * t.cols(), t.cols());
    double sum = 0, sq = 0;
    for (float x : v) sum += x, sq += double(x) * x;
    const double mean = sum / v.size();
    return std::pair<double, double>(mean, std::sqrt(sq / v.size() - mean * mean));
  };
  // Matrices: mean 0, std 1/sqrt(fan_in) (quantisation adds a few percent of noise).
  auto [m1, s1] = stats("blk.1.attn_q.weight");
  EXPECT_NEAR(m1, 0.0, 0.005);
  EXPECT_NEAR(s1, 1.0 / 16, 0.1 / 16);
  auto [m2, s2] = stats("blk.1.ffn_down.weight");
  EXPECT_NEAR(s2, 1.0 / std::sqrt(512.0), 0.1 / std::sqrt(512.0));
  auto [m3, s3] = stats("token_embd.weight");
  EXPECT_NEAR(s3, 1.0 / 16, 0.1 / 16);
  // Norms around 1.
  auto [m4, s4] = stats("blk.0.ffn_norm.weight");
  EXPECT_NEAR(m4, 1.0, 0.02);
  EXPECT_NEAR(s4, 0.05, 0.02);
}

TEST(Synthesize, SpecsFollowTheArchitecture) {
  SF_SKIP_WITHOUT_SHARED();
  SynthOptions o = small_options("qwen2", "unused.gguf");
  const auto specs = synth_tensor_specs(o, 100);
  ASSERT_EQ(specs.size(), 2 + 1 + 2 * 12u);
  EXPECT_EQ(specs.front().name, "token_embd.weight");
  EXPECT_EQ(specs.back().name, "output.weight");
  EXPECT_EQ(specs[1].name, "blk.0.attn_norm.weight");
  EXPECT_FLOAT_EQ(specs[1].mean, 1.0f);
}

void expect_rejected(const SynthOptions& o, const std::string& substring) {
  const Status st = synthesize_model(o);
  ASSERT_FALSE(st.ok()) << "expected: " << substring;
  EXPECT_NE(st.message().find(substring), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << "one line: " << st.message();
  EXPECT_FALSE(std::filesystem::exists(o.output_path)) << o.output_path;
}

TEST(Synthesize, RejectsBadShapesWithClearErrors) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  const SynthOptions good = small_options("llama", dir + "/m.gguf");
  SynthOptions o = good;
  o.arch = "gpt-j";
  expect_rejected(o, "unsupported architecture 'gpt-j' (supported: llama, qwen2, qwen3)");
  o = good;
  o.n_head = 3;
  o.n_head_kv = 1;
  expect_rejected(o, "embedding size 64 is not divisible by 3 heads (pass --head-dim");
  o.n_head_kv = 3;
  o.head_dim = 16;
  ASSERT_TRUE(validate_synth_options(o).ok()) << "--head-dim makes any head count valid";
  o = good;
  o.n_head_kv = 3;
  expect_rejected(o, "KV head count 3 does not divide the head count 4");
  o.n_head_kv = 8;
  expect_rejected(o, "KV head count 8 does not divide the head count 4");
  o = good;
  o.n_embd = 0;
  expect_rejected(o, "embedding size (--embd) must be positive, got 0");
  o = good;
  o.n_layer = 0;
  expect_rejected(o, "layer count (--layers) must be positive");
  o = good;
  o.n_ff = -5;
  expect_rejected(o, "FFN size (--ffn) must be positive, got -5");
  o = good;
  o.n_head = 0;
  expect_rejected(o, "head count (--heads) must be positive");
  o = good;
  o.head_dim = 15;
  expect_rejected(o, "head size 15 must be even");
  o = good;
  o.n_embd = 1 << 20;
  expect_rejected(o, "more than the maximum");
  o = good;
  o.vocab_from = dir + "/missing-vocab.gguf";
  expect_rejected(o, "vocabulary: " + dir + "/missing-vocab.gguf: cannot open");
  o = good;
  o.vocab_from = sf::test::shared_path("reference/models/synth-llama-tok512-Q4_0.gguf");
  ASSERT_TRUE(validate_synth_options(o).ok());
  o.vocab_from = dir;  // a directory
  expect_rejected(o, "is a directory");
  o = good;
  o.type = {GgmlType::Q8_K};
  expect_rejected(o, "Q8_K is not a weight type");
}

TEST(Synthesize, RejectsFilesWithoutAVocabulary) {
  SF_SKIP_WITHOUT_SHARED();
  // A valid GGUF with no metadata at all.
  const std::string dir = sf::test::per_test_scratch_dir();
  {
    std::ofstream out(dir + "/empty.gguf", std::ios::binary);
    const uint32_t header[2] = {0x46554747, 3};
    const uint64_t counts[2] = {0, 0};
    out.write(reinterpret_cast<const char*>(header), sizeof(header));
    out.write(reinterpret_cast<const char*>(counts), sizeof(counts));
  }
  SynthOptions o = small_options("llama", dir + "/m.gguf");
  o.vocab_from = dir + "/empty.gguf";
  expect_rejected(o, "no tokenizer.ggml.tokens string array; not a vocabulary file");
}

}  // namespace
}  // namespace sf
