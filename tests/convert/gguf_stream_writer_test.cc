// The streaming writer must produce exactly the bytes gguf::GgufWriter produces, and must
// never leave a partial file under the final name.
#include "convert/gguf_stream_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf/gguf_writer.h"
#include "gguf/per_test_scratch.h"
#include "test_paths.h"

namespace sf {
namespace {

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct TensorCase {
  std::string name;
  GgmlType type;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

std::vector<TensorCase> sample_tensors() {
  std::vector<TensorCase> ts = {{"a", GgmlType::F32, {3}, {}},
                                {"b", GgmlType::Q8_0, {64, 3}, {}},
                                {"c", GgmlType::Q6_K, {256, 2}, {}},
                                {"d", GgmlType::F16, {7, 1, 2}, {}}};
  for (auto& t : ts) {
    int64_t rows = 1;
    for (size_t i = 1; i < t.dims.size(); ++i) rows *= t.dims[i];
    t.data.resize(row_bytes(t.type, t.dims[0]) * rows);
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(i * 31 + t.name[0]);
  }
  return ts;
}

void fill_metadata(auto& w, uint32_t alignment) {
  w.set("general.architecture", gguf::Value::string("llama"));
  if (alignment != 32) w.set("general.alignment", gguf::Value::u32(alignment));
  w.set("list", gguf::Value::array(gguf::ValueType::kString, {gguf::Value::string("x"), gguf::Value::string("yy")}));
  w.set("nested", gguf::Value::array(gguf::ValueType::kArray,
                                     {gguf::Value::array(gguf::ValueType::kFloat32, {gguf::Value::f32(1.5f)})}));
  w.set("i8", gguf::Value{gguf::ValueType::kInt8, int64_t{-3}});
  w.set("f64", gguf::Value::f64(0.125));
}

TEST(GgufStreamWriter, SameBytesAsGgufWriter) {
  const std::string dir = sf::test::per_test_scratch_dir();
  for (uint32_t alignment : {32u, 64u, 128u}) {
    gguf::GgufWriter reference;
    GgufStreamWriter streamed(dir + "/streamed.gguf");
    fill_metadata(reference, alignment);
    fill_metadata(streamed, alignment);
    for (const auto& t : sample_tensors()) {
      reference.add_tensor(t.name, t.type, t.dims, t.data);
      EXPECT_EQ(streamed.add_tensor(t.name, t.type, t.dims), t.data.size());
    }
    ASSERT_TRUE(reference.write(dir + "/reference.gguf").ok());
    ASSERT_TRUE(streamed.begin().ok());
    for (const auto& t : sample_tensors()) ASSERT_TRUE(streamed.write_next_tensor(t.data.data(), t.data.size()).ok());
    ASSERT_TRUE(streamed.finish().ok());
    EXPECT_EQ(file_bytes(dir + "/streamed.gguf"), file_bytes(dir + "/reference.gguf")) << "alignment " << alignment;
    EXPECT_EQ(streamed.bytes_written(), std::filesystem::file_size(dir + "/streamed.gguf"));
    auto reopened = gguf::GgufFile::open(dir + "/streamed.gguf");
    ASSERT_TRUE(reopened.ok()) << reopened.status().message();
    EXPECT_EQ(reopened->alignment(), alignment);
    EXPECT_FALSE(std::filesystem::exists(dir + "/streamed.gguf.tmp"));
  }
}

TEST(GgufStreamWriter, MisuseIsAnErrorAndLeavesNoFile) {
  const std::string dir = sf::test::per_test_scratch_dir();
  const std::string path = dir + "/out.gguf";
  std::vector<uint8_t> data(68);
  {
    GgufStreamWriter w(path);
    w.add_tensor("t", GgmlType::Q8_0, {32, 2});
    EXPECT_FALSE(w.write_next_tensor(data.data(), data.size()).ok());  // before begin()
    ASSERT_TRUE(w.begin().ok());
    const Status wrong = w.write_next_tensor(data.data(), 67);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.message().find("tensor 't' got 67 bytes, declared 68"), std::string::npos) << wrong.message();
    const Status early = w.finish();
    ASSERT_FALSE(early.ok());
    EXPECT_NE(early.message().find("only 0 of 1 tensors"), std::string::npos) << early.message();
  }
  // Abandoned: neither the final file nor the temporary remains.
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  {
    GgufStreamWriter w(path);
    w.add_tensor("t", GgmlType::Q8_0, {32, 2});
    ASSERT_TRUE(w.begin().ok());
    ASSERT_TRUE(w.write_next_tensor(data.data(), data.size()).ok());
    const Status extra = w.write_next_tensor(data.data(), data.size());
    EXPECT_FALSE(extra.ok());
    EXPECT_TRUE(w.finish().ok());
  }
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(GgufStreamWriter, BadAlignmentAndUnwritableDirectory) {
  const std::string dir = sf::test::per_test_scratch_dir();
  GgufStreamWriter bad_alignment(dir + "/a.gguf");
  bad_alignment.set("general.alignment", gguf::Value::u32(24));
  const Status st = bad_alignment.begin();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("power of two"), std::string::npos) << st.message();
  GgufStreamWriter no_dir(dir + "/missing/dir/b.gguf");
  const Status st2 = no_dir.begin();
  ASSERT_FALSE(st2.ok());
  EXPECT_NE(st2.message().find("cannot create"), std::string::npos) << st2.message();
}

}  // namespace
}  // namespace sf
