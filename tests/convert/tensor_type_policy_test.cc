// Per-tensor type rules (llama-quantize's llama_tensor_get_type for dense models).
#include "convert/tensor_type_policy.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

TensorTypeContext context(const char* target, int n_layer, bool has_output = true, int n_gqa = 1) {
  TensorTypeContext ctx;
  ctx.target = *parse_quant_target(target);
  ctx.n_layer = n_layer;
  ctx.has_output = has_output;
  ctx.n_gqa = n_gqa;
  return ctx;
}

GgmlType type_of(const TensorTypeContext& ctx, const std::string& name, std::vector<int64_t> dims = {512, 512}) {
  const TensorTypeChoice c = choose_tensor_type(ctx, name, dims);
  EXPECT_FALSE(c.fell_back()) << name;
  return c.type;
}

TEST(TensorTypePolicy, OnlyMatricesConvert) {
  EXPECT_TRUE(is_convertible_matrix("blk.0.attn_q.weight", {64, 64}));
  EXPECT_TRUE(is_convertible_matrix("token_embd.weight", {64, 512}));
  EXPECT_FALSE(is_convertible_matrix("blk.0.attn_norm.weight", {64}));
  EXPECT_FALSE(is_convertible_matrix("blk.0.attn_q_norm.weight", {64, 1}));
  EXPECT_FALSE(is_convertible_matrix("blk.0.attn_q.bias", {64}));
  EXPECT_FALSE(is_convertible_matrix("blk.0.attn_q.weight", {64, 1}));  // a vector in disguise
  EXPECT_FALSE(is_convertible_matrix("rope_freqs.weight", {32}));
  EXPECT_EQ(tensor_layer_index("blk.17.ffn_down.weight"), 17);
  EXPECT_EQ(tensor_layer_index("output.weight"), -1);
  EXPECT_EQ(tensor_layer_index("blk.x.ffn_down.weight"), -1);
}

TEST(TensorTypePolicy, LmHeadGetsQ6K) {
  for (const char* t : {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_M", "Q4_K_S", "Q4_K_M", "Q5_K_M", "Q6_K"}) {
    const auto ctx = context(t, 4);
    EXPECT_EQ(type_of(ctx, "output.weight"), GgmlType::Q6_K) << t;
    EXPECT_EQ(type_of(ctx, "token_embd.weight"), ctx.target.type) << t;
  }
  EXPECT_EQ(type_of(context("Q8_0", 4), "output.weight"), GgmlType::Q8_0);
  EXPECT_EQ(type_of(context("F16", 4), "output.weight"), GgmlType::F16);
  EXPECT_EQ(type_of(context("BF16", 4), "output.weight"), GgmlType::BF16);
  // Tied: token_embd is the LM head.
  EXPECT_EQ(type_of(context("Q4_0", 4, /*has_output=*/false), "token_embd.weight"), GgmlType::Q6_K);
  // Rows that Q6_K's 256-blocks do not divide: Q8_0, as llama.cpp does.
  EXPECT_EQ(type_of(context("Q4_0", 4), "output.weight", {288, 512}), GgmlType::Q8_0);
}

TEST(TensorTypePolicy, Q4KMGivesSomeLayersMoreBits) {
  // use_more_bits(i, n): first and last eighth, and every third layer in between.
  const auto ctx = context("Q4_K_M", 16);
  std::vector<int> q6_layers;
  for (int l = 0; l < 16; ++l) {
    const GgmlType v = type_of(ctx, "blk." + std::to_string(l) + ".attn_v.weight");
    const GgmlType d = type_of(ctx, "blk." + std::to_string(l) + ".ffn_down.weight");
    EXPECT_EQ(v, d) << l;
    if (v == GgmlType::Q6_K)
      q6_layers.push_back(l);
    else
      EXPECT_EQ(v, GgmlType::Q4_K) << l;
    EXPECT_EQ(type_of(ctx, "blk." + std::to_string(l) + ".attn_q.weight"), GgmlType::Q4_K);
    EXPECT_EQ(type_of(ctx, "blk." + std::to_string(l) + ".ffn_up.weight"), GgmlType::Q4_K);
  }
  EXPECT_EQ(q6_layers, (std::vector<int>{0, 1, 4, 7, 10, 13, 14, 15}));
  // The reference models in shared/ (3 layers) have Q6_K attn_v/ffn_down only in layer 2.
  const auto three = context("Q4_K_M", 3);
  EXPECT_EQ(type_of(three, "blk.1.attn_v.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of(three, "blk.2.attn_v.weight"), GgmlType::Q6_K);
}

TEST(TensorTypePolicy, OtherMixes) {
  const auto q4s = context("Q4_K_S", 16);
  EXPECT_EQ(type_of(q4s, "blk.3.attn_v.weight"), GgmlType::Q5_K);
  EXPECT_EQ(type_of(q4s, "blk.4.attn_v.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of(q4s, "blk.1.ffn_down.weight"), GgmlType::Q5_K);
  EXPECT_EQ(type_of(q4s, "blk.2.ffn_down.weight"), GgmlType::Q4_K);
  const auto q3m = context("Q3_K_M", 32);
  EXPECT_EQ(type_of(q3m, "blk.1.attn_v.weight"), GgmlType::Q5_K);
  EXPECT_EQ(type_of(q3m, "blk.2.attn_v.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of(q3m, "blk.1.ffn_down.weight"), GgmlType::Q5_K);
  EXPECT_EQ(type_of(q3m, "blk.9.ffn_down.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of(q3m, "blk.9.attn_output.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of(q3m, "blk.9.attn_q.weight"), GgmlType::Q3_K);
  const auto q3l = context("Q3_K_L", 32);
  EXPECT_EQ(type_of(q3l, "blk.9.attn_v.weight"), GgmlType::Q5_K);
  EXPECT_EQ(type_of(q3l, "blk.9.attn_output.weight"), GgmlType::Q5_K);
  const auto q2 = context("Q2_K", 8, true, /*n_gqa=*/4);
  EXPECT_EQ(type_of(q2, "blk.0.attn_v.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of(context("Q2_K", 8), "blk.0.attn_v.weight"), GgmlType::Q3_K);
  EXPECT_EQ(type_of(q2, "blk.0.ffn_down.weight"), GgmlType::Q3_K);
  EXPECT_EQ(type_of(q2, "blk.0.attn_output.weight"), GgmlType::Q3_K);
  EXPECT_EQ(type_of(q2, "blk.0.ffn_gate.weight"), GgmlType::Q2_K);
  // Non-K targets have no mix.
  const auto q40 = context("Q4_0", 16);
  EXPECT_EQ(type_of(q40, "blk.0.attn_v.weight"), GgmlType::Q4_0);
  EXPECT_EQ(type_of(q40, "blk.0.ffn_down.weight"), GgmlType::Q4_0);
}

TEST(TensorTypePolicy, PureAndOverrides) {
  auto ctx = context("Q4_K_M", 16);
  ctx.pure = true;
  EXPECT_EQ(type_of(ctx, "blk.0.attn_v.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of(ctx, "output.weight"), GgmlType::Q4_K);
  ctx.pure = false;
  ctx.output_type = GgmlType::Q8_0;
  ctx.token_embd_type = GgmlType::F16;
  EXPECT_EQ(type_of(ctx, "output.weight"), GgmlType::Q8_0);
  EXPECT_EQ(type_of(ctx, "token_embd.weight"), GgmlType::F16);
}

TEST(TensorTypePolicy, RowLengthFallbacks) {
  struct Case {
    const char* target;
    const char* name;
    int64_t row;
    GgmlType want;
  };
  const Case cases[] = {
      {"Q4_K_M", "blk.3.attn_q.weight", 64, GgmlType::Q5_0},  // llama.cpp: Q4_K -> Q5_0
      {"Q5_K_S", "blk.3.attn_q.weight", 64, GgmlType::Q5_1},  // Q5_K -> Q5_1
      {"Q6_K", "blk.3.attn_q.weight", 96, GgmlType::Q8_0},    // Q6_K -> Q8_0
      {"Q3_K_S", "blk.3.attn_q.weight", 64, GgmlType::Q4_0},  // Q3_K -> IQ4_NL there, Q4_0 here
      {"Q2_K", "blk.3.attn_q.weight", 64, GgmlType::Q4_0},
      {"Q4_K_M", "blk.3.ffn_down.weight", 172, GgmlType::F16},  // not even a multiple of 32
      {"Q8_0", "blk.3.ffn_down.weight", 172, GgmlType::F16},
      {"Q4_0", "blk.3.ffn_down.weight", 48, GgmlType::F16},
  };
  for (const Case& c : cases) {
    const TensorTypeChoice choice = choose_tensor_type(context(c.target, 8), c.name, {c.row, 64});
    EXPECT_EQ(choice.type, c.want) << c.target << " " << c.row;
    EXPECT_TRUE(choice.fell_back());
  }
  // F16 and F32 fit any row.
  EXPECT_FALSE(choose_tensor_type(context("F16", 8), "blk.0.ffn_down.weight", {172, 64}).fell_back());
}

TEST(TensorTypePolicy, FallbackReportGroupsTensors) {
  FallbackReport report;
  const auto ctx = context("Q4_K_M", 8);
  for (const char* name : {"token_embd.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.1.attn_q.weight"})
    report.add(name, 64, choose_tensor_type(ctx, name, {64, 64}));
  report.add("blk.0.ffn_down.weight", 172, choose_tensor_type(ctx, "blk.0.ffn_down.weight", {172, 64}));
  report.add("blk.0.ffn_up.weight", 256, choose_tensor_type(ctx, "blk.0.ffn_up.weight", {256, 64}));  // fits
  const auto w = report.warnings();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0],
            "Q4_K needs rows that are a multiple of 256: 4 tensors with rows of 64 use Q5_0 instead "
            "(token_embd.weight, blk.0.attn_q.weight, blk.0.attn_k.weight, ...)");
  EXPECT_EQ(w[1],
            "Q6_K needs rows that are a multiple of 256: 1 tensor with rows of 172 uses F16 instead "
            "(blk.0.ffn_down.weight)");
}

}  // namespace
}  // namespace sf
