// The type table: GGUF numbering, names as llama.cpp prints them, row sizes.
#include "quant/ggml_type.h"

#include <gtest/gtest.h>

#include "quant_test_util.h"

namespace sf {
namespace {

TEST(GgmlType, NumbersAndNamesRoundTrip) {
  for (GgmlType t : test::all_types()) {
    const TypeInfo* info = find_type_info(static_cast<uint32_t>(t));
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->type, t);
    EXPECT_EQ(type_from_name(type_name(t)), t);
  }
  EXPECT_EQ(type_from_name("q4_k"), GgmlType::Q4_K);
  EXPECT_EQ(type_from_name("bf16"), GgmlType::BF16);
  EXPECT_FALSE(type_from_name("Q4_K_M").has_value());  // a file type, not a tensor type
  EXPECT_EQ(find_type_info(4), nullptr);               // Q4_2, removed from ggml
  EXPECT_EQ(find_type_info(16), nullptr);              // IQ2_XXS: not supported
}

TEST(GgmlType, ActivationOnlyFormatsAreNotWeights) {
  EXPECT_FALSE(type_info(GgmlType::Q8_1).is_weight_type);
  EXPECT_FALSE(type_info(GgmlType::Q8_K).is_weight_type);
  EXPECT_TRUE(type_info(GgmlType::Q6_K).is_weight_type);
}

TEST(GgmlType, RowBytes) {
  EXPECT_EQ(row_bytes(GgmlType::F32, 7), 28u);
  EXPECT_EQ(row_bytes(GgmlType::BF16, 3), 6u);
  EXPECT_EQ(row_bytes(GgmlType::Q4_0, 64), 36u);
  EXPECT_EQ(row_bytes(GgmlType::Q8_K, 512), 584u);
  EXPECT_DEATH(row_bytes(GgmlType::Q4_K, 100), "block size");
}

}  // namespace
}  // namespace sf
