// quantize_model on real files: stories260K (rows of 64 and 172, so the K-quants fall
// back) and the F32 reference model in shared/ (rows of 512/1024, so they do not), checked
// against the originals and against llama-quantize's own outputs of the same model.
#include "convert/model_quantizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "gguf/gguf_file.h"
#include "gguf/per_test_scratch.h"
#include "quant/dequantize.h"
#include "test_paths.h"

namespace sf {
namespace {

std::vector<float> tensor_floats(const gguf::GgufFile& f, const gguf::TensorInfo& t) {
  auto data = f.read_tensor_data(t);
  EXPECT_TRUE(data.ok());
  std::vector<float> out(static_cast<size_t>(t.n_elements()));
  const size_t stride = row_bytes(t.type, t.cols());
  for (int64_t r = 0; r < t.rows(); ++r)
    dequantize_row(t.type, data->data() + r * stride, out.data() + r * t.cols(), t.cols());
  return out;
}

// ||a - b|| / ||a||
double relative_rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    ref += double(a[i]) * a[i];
  }
  return std::sqrt(err / std::max(ref, 1e-30));
}

QuantizeOptions quiet_options() {
  QuantizeOptions o;
  o.n_threads = 2;
  return o;
}

struct StoriesCase {
  const char* target;
  GgmlType matrix64;          // rows of 64 (attention, token_embd, ffn_gate/up)
  GgmlType attn_v_more_bits;  // attn_v of layers 2 and 4, which the _M mix gives more bits
  GgmlType matrix172;         // rows of 172 (ffn_down)
  GgmlType head;              // output.weight (rows of 64)
  double max_rmse;            // worst relative RMSE over all matrices
  uint32_t ftype;
};

class QuantizeStories : public testing::TestWithParam<StoriesCase> {};

TEST_P(QuantizeStories, TypesShapesMetadataAndValues) {
  SF_SKIP_WITHOUT_SHARED();
  const StoriesCase& c = GetParam();
  const std::string in = sf::test::shared_path("models/stories260K.gguf");
  const std::string out = sf::test::per_test_scratch_dir() + "/out.gguf";
  const auto target = parse_quant_target(c.target);
  ASSERT_TRUE(target.has_value());
  QuantizeOptions options = quiet_options();
  options.mix = target->mix;
  const Status st = quantize_model(in, out, target->type, options);
  ASSERT_TRUE(st.ok()) << st.message();

  auto src = gguf::GgufFile::open(in);
  auto dst = gguf::GgufFile::open(out);
  ASSERT_TRUE(src.ok() && dst.ok());
  // Metadata: everything copied (same values, same order), plus file type and version.
  for (const auto& [key, value] : src->metadata()) {
    const gguf::Value* v = dst->find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->type, value.type) << key;
    EXPECT_EQ(v->to_display_string(1000), value.to_display_string(1000)) << key;
  }
  EXPECT_EQ(dst->get_int("general.file_type"), c.ftype);
  EXPECT_EQ(dst->get_int("general.quantization_version"), 2);
  EXPECT_EQ(dst->get_string_array("tokenizer.ggml.tokens")->size(), 512u);

  ASSERT_EQ(dst->tensors().size(), src->tensors().size());
  double worst = 0;
  for (size_t i = 0; i < src->tensors().size(); ++i) {
    const gguf::TensorInfo& a = src->tensors()[i];
    const gguf::TensorInfo& b = dst->tensors()[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.dims, a.dims) << a.name;
    const std::vector<float> va = tensor_floats(*src, a), vb = tensor_floats(*dst, b);
    if (a.dims.size() == 1) {
      EXPECT_EQ(b.type, GgmlType::F32) << a.name;  // norms untouched, bit for bit
      EXPECT_EQ(va, vb) << a.name;
      continue;
    }
    const bool more_bits = a.name == "blk.2.attn_v.weight" || a.name == "blk.4.attn_v.weight";
    const GgmlType want = a.name == "output.weight" ? c.head
                          : a.dims[0] == 172        ? c.matrix172
                          : more_bits               ? c.attn_v_more_bits
                                                    : c.matrix64;
    EXPECT_EQ(b.type, want) << a.name << " is " << type_name(b.type);
    const double e = relative_rmse(va, vb);
    EXPECT_GT(e, 0.0) << a.name << ": the values should have changed";
    worst = std::max(worst, e);
  }
  EXPECT_LT(worst, c.max_rmse);
  RecordProperty("worst_relative_rmse", std::to_string(worst));
  EXPECT_LT(dst->file_size(), src->file_size());
}

// Bounds: a b-bit round-to-nearest code with a per-32 scale has relative RMSE ~ 2^-b * 1.3
// on these weights; F16 (used for the 172-wide rows) is ~3e-4. Q4_K and Q6_K fall back
// (64-wide rows are not multiples of 256) to Q5_0 and Q8_0, and Q4_K_M's Q6_K attn_v
// layers to Q8_0, which is what llama-quantize picks too.
using T = GgmlType;
INSTANTIATE_TEST_SUITE_P(Types, QuantizeStories,
                         testing::Values(StoriesCase{"Q8_0", T::Q8_0, T::Q8_0, T::F16, T::Q8_0, 0.01, 7},
                                         StoriesCase{"Q4_0", T::Q4_0, T::Q4_0, T::F16, T::Q8_0, 0.15, 2},
                                         StoriesCase{"Q4_K", T::Q5_0, T::Q8_0, T::F16, T::Q8_0, 0.08, 15},
                                         StoriesCase{"Q6_K", T::Q8_0, T::Q8_0, T::F16, T::Q8_0, 0.01, 18},
                                         StoriesCase{"F16", T::F16, T::F16, T::F16, T::F16, 0.001, 1}),
                         [](const testing::TestParamInfo<StoriesCase>& info) {
                           return std::string(info.param.target);
                         });

// The shared reference models were made by llama-quantize from synth-llama-tok512.gguf
// (F32). Quantising the same source must give the same per-tensor types and the same bytes.
struct ReferenceCase {
  const char* target;
  const char* reference;
  double max_rmse_vs_source;
};

class QuantizeLikeLlamaCpp : public testing::TestWithParam<ReferenceCase> {};

TEST_P(QuantizeLikeLlamaCpp, SameTypesAndValues) {
  SF_SKIP_WITHOUT_SHARED();
  const ReferenceCase& c = GetParam();
  const std::string in = sf::test::shared_path("reference/models/synth-llama-tok512.gguf");
  const std::string out = sf::test::per_test_scratch_dir() + "/out.gguf";
  const auto target = parse_quant_target(c.target);
  QuantizeOptions options = quiet_options();
  options.mix = target->mix;
  ASSERT_TRUE(quantize_model(in, out, target->type, options).ok());
  auto src = gguf::GgufFile::open(in);
  auto ours = gguf::GgufFile::open(out);
  auto ref = gguf::GgufFile::open(sf::test::shared_path(std::string("reference/models/") + c.reference));
  ASSERT_TRUE(src.ok() && ours.ok() && ref.ok());
  EXPECT_EQ(ours->get_int("general.file_type"), ref->get_int("general.file_type"));
  int identical = 0;
  for (const auto& t : ours->tensors()) {
    const gguf::TensorInfo* r = ref->find_tensor(t.name);
    ASSERT_NE(r, nullptr) << t.name;
    EXPECT_EQ(t.type, r->type) << t.name << ": ours " << type_name(t.type) << ", llama.cpp " << type_name(r->type);
    EXPECT_EQ(t.dims, r->dims) << t.name;
    if (t.type != r->type) continue;
    const std::vector<float> vs = tensor_floats(*src, *src->find_tensor(t.name));
    const std::vector<float> vo = tensor_floats(*ours, t), vr = tensor_floats(*ref, *r);
    EXPECT_LT(relative_rmse(vs, vo), c.max_rmse_vs_source) << t.name;
    // Against llama.cpp: far below the quantisation error itself.
    EXPECT_LT(relative_rmse(vr, vo), c.max_rmse_vs_source * 0.1) << t.name;
    identical += *ours->read_tensor_data(t) == *ref->read_tensor_data(*r);
  }
  // The reference quantisers in quant/ follow llama.cpp's (no importance matrix) to the
  // bit, so every tensor matches exactly. If a kernel change breaks this, the RMSE checks
  // above tell whether it is a small rounding difference or a real error.
  EXPECT_EQ(identical, static_cast<int>(ours->tensors().size())) << "tensors bit-identical to llama-quantize's";
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizeLikeLlamaCpp,
                         testing::Values(ReferenceCase{"Q8_0", "synth-llama-tok512-Q8_0.gguf", 0.01},
                                         ReferenceCase{"Q6_K", "synth-llama-tok512-Q6_K.gguf", 0.03},
                                         ReferenceCase{"Q4_K_M", "synth-llama-tok512-Q4_K_M.gguf", 0.12},
                                         ReferenceCase{"Q4_0", "synth-llama-tok512-Q4_0.gguf", 0.15}),
                         [](const testing::TestParamInfo<ReferenceCase>& info) {
                           return std::string(info.param.target);
                         });

TEST(Quantize, RequantisingKeepsSameTypeTensorsBitExact) {
  SF_SKIP_WITHOUT_SHARED();
  // Q8_0 -> Q8_0 copies every matrix; the result equals the input's tensor bytes.
  const std::string in = sf::test::shared_path("reference/models/synth-llama-tok512-Q8_0.gguf");
  const std::string out = sf::test::per_test_scratch_dir() + "/out.gguf";
  ASSERT_TRUE(quantize_model(in, out, GgmlType::Q8_0, quiet_options()).ok());
  auto a = gguf::GgufFile::open(in);
  auto b = gguf::GgufFile::open(out);
  ASSERT_TRUE(a.ok() && b.ok());
  for (const auto& t : a->tensors())
    EXPECT_EQ(*a->read_tensor_data(t), *b->read_tensor_data(*b->find_tensor(t.name))) << t.name;
}

TEST(Quantize, ThreadCountDoesNotChangeBytes) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string in = sf::test::shared_path("models/stories260K.gguf");
  const std::string dir = sf::test::per_test_scratch_dir();
  QuantizeOptions one = quiet_options(), three = quiet_options();
  one.n_threads = 1;
  three.n_threads = 3;
  ASSERT_TRUE(quantize_model(in, dir + "/a.gguf", GgmlType::Q4_0, one).ok());
  ASSERT_TRUE(quantize_model(in, dir + "/b.gguf", GgmlType::Q4_0, three).ok());
  auto a = gguf::GgufFile::open(dir + "/a.gguf");
  auto b = gguf::GgufFile::open(dir + "/b.gguf");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->file_size(), b->file_size());
  for (size_t i = 0; i < a->tensors().size(); ++i)
    EXPECT_EQ(*a->read_tensor_data(a->tensors()[i]), *b->read_tensor_data(b->tensors()[i]));
}

TEST(Quantize, Errors) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  const Status missing = quantize_model(dir + "/nope.gguf", dir + "/out.gguf", GgmlType::Q4_0, quiet_options());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("nope.gguf: cannot open"), std::string::npos) << missing.message();
  const Status activation = quantize_model(sf::test::shared_path("models/stories260K.gguf"), dir + "/out.gguf",
                                           GgmlType::Q8_K, quiet_options());
  ASSERT_FALSE(activation.ok());
  EXPECT_NE(activation.message().find("Q8_K: it is an activation format"), std::string::npos) << activation.message();
  const Status vocab_only = quantize_model(sf::test::shared_path("vocab/ggml-vocab-gpt-2.gguf"), dir + "/out.gguf",
                                           GgmlType::Q4_0, quiet_options());
  ASSERT_FALSE(vocab_only.ok());
  EXPECT_NE(vocab_only.message().find("has no tensors"), std::string::npos) << vocab_only.message();
  const Status unwritable = quantize_model(sf::test::shared_path("models/stories260K.gguf"),
                                           dir + "/no/such/dir/out.gguf", GgmlType::Q4_0, quiet_options());
  ASSERT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.message().find("cannot create"), std::string::npos) << unwritable.message();
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.gguf"));
}

}  // namespace
}  // namespace sf
