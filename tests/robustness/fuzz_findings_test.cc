// What the fuzzers found, pinned down as plain assertions. The crashing inputs themselves
// are in tests/robustness/corpus/<target>/crash-* and replayed by CorpusReplay, but their
// bugs were undefined behaviour that only a sanitizer build reports; these tests fail in the
// normal build too if a fix is undone.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_value.h"
#include "test_paths.h"

namespace sf {
namespace {

// fuzz_gguf_reader: a float metadata array read as integers (get_int_array) converted
// 1e38 to int64, which is undefined.
TEST(FuzzFindings, FloatMetadataOutsideInt64SaturatesWhenReadAsInt) {
  EXPECT_EQ(gguf::Value::f32(1e38f).as_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(gguf::Value::f64(-1e300).as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(gguf::Value::f64(std::nan("")).as_int(), 0);
  EXPECT_EQ(gguf::Value::f64(-3.9).as_int(), -3);
  auto f = gguf::GgufFile::open(
      test::source_path("tests/robustness/corpus/gguf_reader/crash-float-metadata-as-int-overflow"));
  ASSERT_TRUE(f.ok()) << f.status().message();  // a valid file; only the lookup misbehaved
  for (const auto& [key, value] : f->metadata()) (void)f->get_int_array(key);
}

// fuzz_draft_compat: a tensor whose dimensions (each within the 2^40 limit) multiply past
// int64 overflowed in the element count (signed overflow: undefined). In this input the
// product wrapped to 0 and was rejected anyway, so only UBSan saw the bug; this test checks
// the message, and CorpusReplay under scripts/sanitize.sh asan catches a regression.
TEST(FuzzFindings, TensorWhoseDimensionsOverflowIsRejected) {
  const std::string path = test::source_path("tests/robustness/corpus/draft_compat/crash-tensor-dims-product-overflow");
  auto f = gguf::GgufFile::open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("impossible size"), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace sf
