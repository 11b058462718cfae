// Type names accepted by quantize/synth and the llama_ftype numbers they record.
#include "convert/quant_target.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

TEST(QuantTarget, ParsesGgmlAndFtypeNames) {
  struct Case {
    const char* name;
    GgmlType type;
    QuantMix mix;
    uint32_t ftype;
    const char* canonical;
  };
  const Case cases[] = {
      {"F32", GgmlType::F32, QuantMix::kMedium, 0, "F32"},
      {"f16", GgmlType::F16, QuantMix::kMedium, 1, "F16"},
      {"bf16", GgmlType::BF16, QuantMix::kMedium, 32, "BF16"},
      {"Q4_0", GgmlType::Q4_0, QuantMix::kMedium, 2, "Q4_0"},
      {"q4_1", GgmlType::Q4_1, QuantMix::kMedium, 3, "Q4_1"},
      {"Q8_0", GgmlType::Q8_0, QuantMix::kMedium, 7, "Q8_0"},
      {"q5_0", GgmlType::Q5_0, QuantMix::kMedium, 8, "Q5_0"},
      {"Q5_1", GgmlType::Q5_1, QuantMix::kMedium, 9, "Q5_1"},
      {"Q2_K", GgmlType::Q2_K, QuantMix::kMedium, 10, "Q2_K"},
      {"Q3_K_S", GgmlType::Q3_K, QuantMix::kSmall, 11, "Q3_K_S"},
      {"Q3_K", GgmlType::Q3_K, QuantMix::kMedium, 12, "Q3_K_M"},
      {"q3_k_m", GgmlType::Q3_K, QuantMix::kMedium, 12, "Q3_K_M"},
      {"Q3_K_L", GgmlType::Q3_K, QuantMix::kLarge, 13, "Q3_K_L"},
      {"Q4_K_S", GgmlType::Q4_K, QuantMix::kSmall, 14, "Q4_K_S"},
      {"Q4_K", GgmlType::Q4_K, QuantMix::kMedium, 15, "Q4_K_M"},
      {"Q4_K_M", GgmlType::Q4_K, QuantMix::kMedium, 15, "Q4_K_M"},
      {"Q5_K_S", GgmlType::Q5_K, QuantMix::kSmall, 16, "Q5_K_S"},
      {"Q5_K", GgmlType::Q5_K, QuantMix::kMedium, 17, "Q5_K_M"},
      {"Q5_K_M", GgmlType::Q5_K, QuantMix::kMedium, 17, "Q5_K_M"},
      {"Q6_K", GgmlType::Q6_K, QuantMix::kMedium, 18, "Q6_K"},
  };
  for (const Case& c : cases) {
    const auto t = parse_quant_target(c.name);
    ASSERT_TRUE(t.has_value()) << c.name;
    EXPECT_EQ(t->type, c.type) << c.name;
    EXPECT_EQ(t->mix, c.mix) << c.name;
    EXPECT_EQ(llama_file_type(*t), c.ftype) << c.name;
    EXPECT_EQ(quant_target_name(*t), c.canonical) << c.name;
  }
}

TEST(QuantTarget, RejectsUnknownAndActivationTypes) {
  for (const char* bad : {"", "Q4", "Q4_K_L", "Q8_K", "Q8_1", "IQ4_NL", "Q6_K_M", "f64", "Q4_0 "})
    EXPECT_FALSE(parse_quant_target(bad).has_value()) << bad;
}

TEST(QuantTarget, MixWithoutARecipeCollapses) {
  // Q4_0 has no mixes and Q4_K no _L: both name their single recipe.
  EXPECT_EQ(quant_target_name({GgmlType::Q4_0, QuantMix::kSmall}), "Q4_0");
  EXPECT_EQ(llama_file_type({GgmlType::Q4_K, QuantMix::kLarge}), 15u);
  EXPECT_TRUE(is_block_quantized(GgmlType::Q4_0));
  EXPECT_FALSE(is_block_quantized(GgmlType::BF16));
}

}  // namespace
}  // namespace sf
