// GGUF reader and writer: round trips of every metadata type and tensor layout, every
// shared model/vocabulary file, and a catalogue of corrupt files that must fail with a
// message naming the problem (never a crash).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_raw_builder.h"
#include "gguf/gguf_writer.h"
#include "gguf/per_test_scratch.h"
#include "test_paths.h"

namespace sf::gguf {
namespace {

using sf::test::RawGguf;

Value typed(ValueType type, int64_t v) { return Value{type, v}; }
Value typed_u(ValueType type, uint64_t v) { return Value{type, v}; }

std::string scratch(const std::string& file) { return sf::test::per_test_scratch_dir() + "/" + file; }

// Opens bytes written to a scratch file; the Status for failure checks.
Result<GgufFile> open_bytes(const RawGguf& raw, const std::string& name, size_t max_bytes = SIZE_MAX) {
  const std::string path = scratch(name + ".gguf");
  EXPECT_TRUE(raw.save(path, max_bytes));
  return GgufFile::open(path);
}

void expect_error(const Result<GgufFile>& r, const std::string& substring) {
  ASSERT_FALSE(r.ok()) << "expected an error containing '" << substring << "'";
  EXPECT_NE(r.status().message().find(substring), std::string::npos)
      << "message: " << r.status().message() << "\nexpected substring: " << substring;
}

TEST(GgufRoundTrip, EveryMetadataValueType) {
  GgufWriter w;
  w.set("u8", typed_u(ValueType::kUint8, 200));
  w.set("i8", typed(ValueType::kInt8, -100));
  w.set("u16", typed_u(ValueType::kUint16, 65000));
  w.set("i16", typed(ValueType::kInt16, -32000));
  w.set("u32", Value::u32(4000000000u));
  w.set("i32", Value::i32(-2000000000));
  w.set("u64", Value::u64(18000000000000000000ull));
  w.set("i64", Value::i64(-9000000000000000000ll));
  w.set("f32", Value::f32(3.25f));
  w.set("f64", Value::f64(-1.0e-300));
  w.set("bool_true", Value::boolean(true));
  w.set("bool_false", Value::boolean(false));
  w.set("string", Value::string("héllo, \"world\"\n"));
  w.set("empty_string", Value::string(""));
  w.set("strings", Value::array(ValueType::kString, {Value::string("a"), Value::string(""), Value::string("ccc")}));
  w.set("ints", Value::array(ValueType::kInt32, {Value::i32(-1), Value::i32(0), Value::i32(7)}));
  w.set("floats", Value::array(ValueType::kFloat32, {Value::f32(0.5f), Value::f32(-2.0f)}));
  w.set("empty_array", Value::array(ValueType::kUint8, {}));
  w.set("nested", Value::array(ValueType::kArray, {Value::array(ValueType::kInt32, {Value::i32(1), Value::i32(2)}),
                                                   Value::array(ValueType::kString, {Value::string("x")})}));
  w.set("u32", Value::u32(42));  // replacing keeps the first position
  const std::string path = scratch("values.gguf");
  ASSERT_TRUE(w.write(path).ok());

  auto r = GgufFile::open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const GgufFile& f = *r;
  EXPECT_EQ(f.version(), 3u);
  ASSERT_EQ(f.metadata().size(), 19u);
  EXPECT_EQ(f.metadata()[4].first, "u32");
  EXPECT_EQ(f.find("u8")->type, ValueType::kUint8);
  EXPECT_EQ(f.get_int("u8"), 200);
  EXPECT_EQ(f.find("i8")->type, ValueType::kInt8);
  EXPECT_EQ(f.get_int("i8"), -100);
  EXPECT_EQ(f.find("u16")->type, ValueType::kUint16);
  EXPECT_EQ(f.get_int("u16"), 65000);
  EXPECT_EQ(f.find("i16")->type, ValueType::kInt16);
  EXPECT_EQ(f.get_int("i16"), -32000);
  EXPECT_EQ(f.find("u32")->type, ValueType::kUint32);
  EXPECT_EQ(f.get_int("u32"), 42);
  EXPECT_EQ(f.find("i32")->type, ValueType::kInt32);
  EXPECT_EQ(f.get_int("i32"), -2000000000);
  EXPECT_EQ(f.find("u64")->type, ValueType::kUint64);
  EXPECT_EQ(std::get<uint64_t>(f.find("u64")->data), 18000000000000000000ull);
  EXPECT_EQ(f.find("i64")->type, ValueType::kInt64);
  EXPECT_EQ(f.get_int("i64"), -9000000000000000000ll);
  EXPECT_EQ(f.find("f32")->type, ValueType::kFloat32);
  EXPECT_EQ(f.get_float("f32"), 3.25);
  EXPECT_EQ(f.find("f64")->type, ValueType::kFloat64);
  EXPECT_EQ(f.get_float("f64"), -1.0e-300);
  EXPECT_EQ(f.get_bool("bool_true"), true);
  EXPECT_EQ(f.get_bool("bool_false"), false);
  EXPECT_EQ(f.find("bool_true")->type, ValueType::kBool);
  EXPECT_EQ(f.get_string("string"), "héllo, \"world\"\n");
  EXPECT_EQ(f.get_string("empty_string"), "");
  EXPECT_EQ(f.get_string_array("strings"), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(f.get_int_array("ints"), (std::vector<int64_t>{-1, 0, 7}));
  EXPECT_EQ(f.find("ints")->as_array().element_type, ValueType::kInt32);
  EXPECT_EQ(f.get_float_array("floats"), (std::vector<float>{0.5f, -2.0f}));
  ASSERT_TRUE(f.find("empty_array")->is_array());
  EXPECT_TRUE(f.find("empty_array")->as_array().items.empty());
  EXPECT_EQ(f.find("empty_array")->as_array().element_type, ValueType::kUint8);

  const Value* nested = f.find("nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->as_array().element_type, ValueType::kArray);
  ASSERT_EQ(nested->as_array().items.size(), 2u);
  const Array& first = nested->as_array().items[0].as_array();
  EXPECT_EQ(first.element_type, ValueType::kInt32);
  ASSERT_EQ(first.items.size(), 2u);
  EXPECT_EQ(first.items[1].as_int(), 2);
  EXPECT_EQ(nested->as_array().items[1].as_array().items[0].as_string(), "x");

  // Absent keys and wrong types are nullopt, not errors.
  EXPECT_FALSE(f.get_string("missing"));
  EXPECT_FALSE(f.get_int("string"));
  EXPECT_FALSE(f.get_string_array("ints"));
  EXPECT_TRUE(f.tensors().empty());
}

// Writes tensors of awkward sizes and checks offsets, alignment and bytes.
void check_tensor_layout(uint32_t alignment, bool set_alignment_key) {
  GgufWriter w;
  if (set_alignment_key) w.set("general.alignment", Value::u32(alignment));
  struct Spec {
    std::string name;
    GgmlType type;
    std::vector<int64_t> dims;
  };
  const std::vector<Spec> specs = {{"a", GgmlType::F32, {3}},
                                   {"b", GgmlType::F16, {5, 3}},
                                   {"c", GgmlType::Q8_0, {32, 2}},
                                   {"d", GgmlType::Q4_K, {256, 1, 2}},
                                   {"e", GgmlType::BF16, {1}}};
  std::vector<std::vector<uint8_t>> datas;
  for (size_t i = 0; i < specs.size(); ++i) {
    int64_t rows = 1;
    for (size_t d = 1; d < specs[i].dims.size(); ++d) rows *= specs[i].dims[d];
    std::vector<uint8_t> data(row_bytes(specs[i].type, specs[i].dims[0]) * rows);
    for (size_t j = 0; j < data.size(); ++j) data[j] = static_cast<uint8_t>(j * 7 + i);
    w.add_tensor(specs[i].name, specs[i].type, specs[i].dims, data);
    datas.push_back(data);
  }
  const std::string path = scratch("align" + std::to_string(alignment) + ".gguf");
  ASSERT_TRUE(w.write(path).ok());
  auto r = GgufFile::open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->alignment(), alignment);
  EXPECT_EQ(r->data_offset() % alignment, 0u);
  ASSERT_EQ(r->tensors().size(), specs.size());
  uint64_t previous_end = r->data_offset();
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorInfo& t = r->tensors()[i];
    EXPECT_EQ(t.name, specs[i].name);
    EXPECT_EQ(t.type, specs[i].type);
    EXPECT_EQ(t.dims, specs[i].dims);
    EXPECT_EQ(t.n_bytes, datas[i].size());
    EXPECT_EQ(t.file_offset % alignment, 0u) << t.name;
    EXPECT_EQ(t.file_offset, r->data_offset() + t.relative_offset);
    EXPECT_GE(t.file_offset, previous_end) << "tensors overlap";
    previous_end = t.file_offset + t.n_bytes;
    EXPECT_EQ(r->find_tensor(t.name), &t);
    auto bytes = r->read_tensor_data(t);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, datas[i]) << t.name;
  }
  EXPECT_LE(previous_end, r->file_size());
  EXPECT_EQ(r->tensors()[3].rows(), 2);
  EXPECT_EQ(r->tensors()[3].cols(), 256);
  EXPECT_EQ(r->find_tensor("zz"), nullptr);
}

TEST(GgufRoundTrip, TensorOffsetsDefaultAlignment) { check_tensor_layout(32, false); }
TEST(GgufRoundTrip, TensorOffsetsCustomAlignment) {
  check_tensor_layout(64, true);
  check_tensor_layout(256, true);
  check_tensor_layout(8, true);
}

std::vector<std::string> gguf_files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".gguf") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GgufSharedFiles, EveryReferenceModelOpens) {
  SF_SKIP_WITHOUT_SHARED();
  const auto files = gguf_files_in(sf::test::shared_path("reference/models"));
  ASSERT_GE(files.size(), 10u);
  for (const auto& path : files) {
    auto r = GgufFile::open(path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->architecture().empty()) << path;
    EXPECT_NE(r->find_tensor("token_embd.weight"), nullptr) << path;
    for (const auto& t : r->tensors()) EXPECT_LE(t.file_offset + t.n_bytes, r->file_size()) << path << " " << t.name;
  }
  auto stories = GgufFile::open(sf::test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(stories.ok()) << stories.status().message();
  EXPECT_EQ(stories->tensors().size(), 48u);
  EXPECT_EQ(stories->get_int("llama.embedding_length"), 64);
}

TEST(GgufSharedFiles, EveryVocabularyOpens) {
  SF_SKIP_WITHOUT_SHARED();
  const auto files = gguf_files_in(sf::test::shared_path("vocab"));
  ASSERT_GE(files.size(), 5u);
  for (const auto& path : files) {
    auto r = GgufFile::open(path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    auto tokens = r->get_string_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.has_value()) << path;
    EXPECT_GT(tokens->size(), 100u) << path;
  }
}

// A minimal valid file: one metadata string, one F32 tensor of 8 floats.
RawGguf valid_raw() {
  RawGguf g;
  g.header(3, 1, 1).kv_string("general.architecture", "llama");
  g.tensor_info("t", {8}, 0, 0).pad_to(32).zeros(32);
  return g;
}

TEST(GgufBadInput, ValidBaselineOpens) {
  auto r = open_bytes(valid_raw(), "baseline");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tensors()[0].n_bytes, 32u);
}

TEST(GgufBadInput, MissingFile) {
  expect_error(GgufFile::open(scratch("does-not-exist.gguf")), "cannot open");
  expect_error(GgufFile::open(scratch("does-not-exist.gguf")), "does-not-exist.gguf");
}

TEST(GgufBadInput, Directory) {
  const std::string dir = scratch("a-directory.gguf");
  std::filesystem::create_directories(dir);
  expect_error(GgufFile::open(dir), "is a directory");
}

TEST(GgufBadInput, WrongMagicAndTinyFiles) {
  RawGguf g = valid_raw();
  g.bytes[0] = 'X';
  expect_error(open_bytes(g, "magic"), "bad magic");
  RawGguf empty;
  expect_error(open_bytes(empty, "empty"), "not a GGUF file");
  RawGguf three;
  three.bytes = {'G', 'G', 'U'};
  expect_error(open_bytes(three, "three"), "not a GGUF file");
}

TEST(GgufBadInput, Versions) {
  RawGguf v1;
  v1.header(1, 0, 0);
  expect_error(open_bytes(v1, "v1"), "version 1 is not supported");
  RawGguf v99;
  v99.header(99, 0, 0);
  expect_error(open_bytes(v99, "v99"), "unsupported GGUF version 99");
  RawGguf v2;
  v2.header(2, 0, 0);
  auto r = open_bytes(v2, "v2");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->version(), 2u);
}

TEST(GgufBadInput, TruncatedAtEveryStage) {
  const RawGguf g = valid_raw();
  // In the header (inside the tensor count).
  expect_error(open_bytes(g, "trunc_header", 12), "truncated");
  expect_error(open_bytes(g, "trunc_header2", 6), "truncated");
  // Just after the counts: too few bytes left for even one entry each.
  expect_error(open_bytes(g, "trunc_counts", 28), "cannot fit in the file");
  // In the metadata: inside the key, then inside the value string.
  expect_error(open_bytes(g, "trunc_meta_key", 24 + 8 + 5), "too short");
  const size_t value_start = 24 + 8 + 20 + 4;  // key length, "general.architecture", type
  expect_error(open_bytes(g, "trunc_meta_value", value_start + 10), "too short");
  // In the tensor index: after the name, before the type and offset.
  const size_t tensor_start = value_start + 8 + 5;
  expect_error(open_bytes(g, "trunc_index", tensor_start + 8 + 1 + 4 + 8 + 2), "truncated");
  // In the data: the tensor's 32 bytes are cut short.
  const auto r = open_bytes(g, "trunc_data", g.size() - 1);
  expect_error(r, "points past the end of the file");
  expect_error(r, "'t'");
}

TEST(GgufBadInput, TensorPastEndOfFile) {
  RawGguf g;
  g.header(3, 1, 0).tensor_info("blk.0.attn_q.weight", {64, 64}, 0, 0).pad_to(32).zeros(100);
  expect_error(open_bytes(g, "past_end"), "tensor 'blk.0.attn_q.weight' points past the end of the file");
  RawGguf huge_offset;
  huge_offset.header(3, 1, 0).tensor_info("t", {8}, 0, uint64_t{1} << 62).pad_to(32).zeros(32);
  expect_error(open_bytes(huge_offset, "huge_offset"), "points past the end");
}

TEST(GgufBadInput, UnknownTensorType) {
  RawGguf g;
  g.header(3, 1, 0).tensor_info("weird", {32}, 99, 0).pad_to(32).zeros(64);
  auto r = open_bytes(g, "unknown_type");
  expect_error(r, "tensor 'weird' has weight type 99");
  expect_error(r, "does not support");
  RawGguf iq;  // IQ2_XXS (16) is a real ggml type that specflash does not implement
  iq.header(3, 1, 0).tensor_info("iq", {256}, 16, 0).pad_to(32).zeros(128);
  expect_error(open_bytes(iq, "iq_type"), "weight type IQ2_XXS (ggml type 16)");
}

TEST(GgufBadInput, BadDimensions) {
  RawGguf zero_dim;
  zero_dim.header(3, 1, 0).tensor_info("z", {8, 0}, 0, 0).pad_to(32).zeros(32);
  expect_error(open_bytes(zero_dim, "zero_dim"), "tensor 'z' has dimension 0");
  RawGguf no_dims;
  no_dims.header(3, 1, 0).tensor_info("n", {}, 0, 0).pad_to(32).zeros(32);
  expect_error(open_bytes(no_dims, "no_dims"), "has 0 dimensions");
  RawGguf five_dims;
  five_dims.header(3, 1, 0).tensor_info("f", {1, 1, 1, 1, 1}, 0, 0).pad_to(32).zeros(32);
  expect_error(open_bytes(five_dims, "five_dims"), "has 5 dimensions");
  RawGguf negative;
  negative.header(3, 1, 0).tensor_info("neg", {-4}, 0, 0).pad_to(32).zeros(32);
  expect_error(open_bytes(negative, "negative_dim"), "has dimension -4");
  RawGguf partial_block;  // Q8_0 rows must be multiples of 32
  partial_block.header(3, 1, 0).tensor_info("q", {33}, 8, 0).pad_to(32).zeros(64);
  expect_error(open_bytes(partial_block, "partial_block"), "not a multiple of Q8_0's block size 32");
  RawGguf overflow;  // each dim is allowed, the product is not
  overflow.header(3, 1, 0).tensor_info("big", {int64_t{1} << 30, int64_t{1} << 30}, 0, 0).pad_to(32).zeros(32);
  expect_error(open_bytes(overflow, "overflow"), "impossible size");
}

TEST(GgufBadInput, MisalignedOffset) {
  RawGguf g;
  g.header(3, 2, 0).tensor_info("a", {8}, 0, 0).tensor_info("b", {8}, 0, 40).pad_to(32).zeros(96);
  expect_error(open_bytes(g, "misaligned"), "tensor 'b' offset 40 is not aligned to 32");
}

TEST(GgufBadInput, AbsurdCounts) {
  RawGguf tensors;
  tensors.header(3, uint64_t{1} << 60, 0).zeros(64);
  expect_error(open_bytes(tensors, "absurd_tensors"), "cannot fit in the file");
  RawGguf kvs;
  kvs.header(3, 0, uint64_t{1} << 60).zeros(64);
  expect_error(open_bytes(kvs, "absurd_kv"), "cannot fit in the file");
  RawGguf array;
  array.header(3, 0, 1).str("tokens").u32(9).u32(8).u64(uint64_t{1} << 60).zeros(64);
  expect_error(open_bytes(array, "absurd_array"), "claims 1152921504606846976 array items");
  RawGguf string;
  string.header(3, 0, 1).str("key").u32(8).u64(uint64_t{1} << 50).zeros(64);
  expect_error(open_bytes(string, "absurd_string"), "has length 1125899906842624");
}

TEST(GgufBadInput, BadMetadata) {
  RawGguf type;
  type.header(3, 0, 1).str("key").u32(13).u32(0);
  expect_error(open_bytes(type, "value_type"), "metadata 'key' has unknown value type 13");
  RawGguf element;
  element.header(3, 0, 1).str("arr").u32(9).u32(77).u64(1).u32(0);
  expect_error(open_bytes(element, "element_type"), "unknown array element type 77");
  RawGguf duplicate;
  duplicate.header(3, 0, 2).kv_u32("k", 1).kv_u32("k", 2);
  expect_error(open_bytes(duplicate, "duplicate_key"), "duplicate metadata key 'k'");
  RawGguf dup_tensor;
  dup_tensor.header(3, 2, 0).tensor_info("t", {8}, 0, 0).tensor_info("t", {8}, 0, 32).pad_to(32).zeros(64);
  expect_error(open_bytes(dup_tensor, "duplicate_tensor"), "duplicate tensor 't'");
  RawGguf alignment;
  alignment.header(3, 0, 1).kv_u32("general.alignment", 48);
  expect_error(open_bytes(alignment, "alignment"), "general.alignment 48 is not a power of two");
  RawGguf deep;  // arrays nested beyond any real use
  deep.header(3, 0, 1).str("deep").u32(9);
  for (int i = 0; i < 8; ++i) deep.u32(9).u64(1);
  deep.u32(4).u64(0);
  expect_error(open_bytes(deep, "deep"), "nests arrays too deeply");
}

// Random truncations and byte corruptions of a valid file: open() must return (either
// way) without crashing, and a file it accepts must be internally consistent.
TEST(GgufBadInput, FuzzedFilesNeverCrash) {
  GgufWriter w;
  w.set("general.architecture", Value::string("llama"));
  w.set("llama.block_count", Value::u32(1));
  w.set("tokens", Value::array(ValueType::kString, {Value::string("a"), Value::string("bb")}));
  w.set("scores", Value::array(ValueType::kFloat32, {Value::f32(1), Value::f32(2)}));
  w.add_tensor("token_embd.weight", GgmlType::Q8_0, {32, 2}, std::vector<uint8_t>(68, 1));
  w.add_tensor("output_norm.weight", GgmlType::F32, {32}, std::vector<uint8_t>(128, 2));
  const std::string valid = scratch("valid.gguf");
  ASSERT_TRUE(w.write(valid).ok());
  RawGguf base;
  {
    FILE* f = std::fopen(valid.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    int c;
    while ((c = std::fgetc(f)) != EOF) base.bytes.push_back(static_cast<uint8_t>(c));
    std::fclose(f);
  }
  std::mt19937_64 rng(1234);
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 500; ++iter) {
    RawGguf g = base;
    size_t keep = g.size();
    if (iter % 3 == 0) {
      keep = rng() % g.size();
    } else {
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < flips; ++k) {
        const size_t pos = rng() % g.size();
        g.bytes[pos] =
            (iter % 2) ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(g.bytes[pos] ^ (1u << (rng() % 8)));
      }
    }
    auto r = open_bytes(g, "fuzz", keep);
    if (!r.ok()) {
      ++rejected;
      EXPECT_FALSE(r.status().message().empty());
      continue;
    }
    ++accepted;
    for (const auto& t : r->tensors()) {
      EXPECT_LE(t.file_offset + t.n_bytes, r->file_size());
      auto data = r->read_tensor_data(t);
      ASSERT_TRUE(data.ok());
      EXPECT_EQ(data->size(), t.n_bytes);
    }
  }
  EXPECT_GT(rejected, 100);
  EXPECT_GT(accepted, 10);  // corruptions of tensor data bytes are legitimately accepted
}

}  // namespace
}  // namespace sf::gguf
