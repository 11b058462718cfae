// A synthesised model must actually run: finite logits with a healthy spread, and a
// greedy argmax that changes with the input (random weights that collapse every position
// to one token would make useless benchmark models).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "convert/model_synthesizer.h"
#include "engine/session.h"
#include "gguf/per_test_scratch.h"
#include "test_paths.h"

namespace sf {
namespace {

struct ForwardCase {
  const char* arch;
  const char* type;
  bool tied;
  int layers;
};

class SynthForward : public testing::TestWithParam<ForwardCase> {};

TEST_P(SynthForward, LogitsAreFiniteAndVaried) {
  const ForwardCase& c = GetParam();
  SynthOptions o;
  o.arch = c.arch;
  o.vocab_from = sf::test::shared_path("models/stories260K.gguf");
  o.output_path = sf::test::per_test_scratch_dir() + "/m.gguf";
  o.n_embd = 256;
  o.n_layer = c.layers;
  o.n_head = 8;
  o.n_head_kv = 2;
  o.n_ff = 512;
  o.tied = c.tied;
  o.type = *parse_quant_target(c.type);
  o.seed = 3;
  o.n_threads = 2;
  ASSERT_TRUE(synthesize_model(o).ok());

  SessionOptions so;
  so.model_path = o.output_path;
  so.n_threads = 2;
  so.n_ctx = 128;
  auto session = Session::create(so);
  ASSERT_TRUE(session.ok()) << session.status().message();
  Session& s = **session;
  const int n_vocab = s.model().hparams().n_vocab;
  ASSERT_EQ(n_vocab, 512);

  std::vector<int32_t> tokens;
  for (int i = 0; i < 48; ++i) tokens.push_back(1 + (i * 37 + i * i) % 511);
  std::vector<float> logits;
  ASSERT_TRUE(s.evaluate(tokens, /*all_rows=*/true, &logits).ok());
  ASSERT_EQ(logits.size(), tokens.size() * n_vocab);

  std::set<int> argmaxes;
  double mean_std = 0;
  for (size_t row = 0; row < tokens.size(); ++row) {
    const float* l = logits.data() + row * n_vocab;
    double sum = 0, sq = 0;
    for (int v = 0; v < n_vocab; ++v) {
      ASSERT_TRUE(std::isfinite(l[v])) << "row " << row << " token " << v;
      sum += l[v];
      sq += double(l[v]) * l[v];
    }
    const double mean = sum / n_vocab;
    mean_std += std::sqrt(sq / n_vocab - mean * mean) / tokens.size();
    argmaxes.insert(static_cast<int>(std::max_element(l, l + n_vocab) - l));
  }
  // Unit-variance weights give logits with a spread of order one: neither collapsed nor
  // exploded.
  EXPECT_GT(mean_std, 0.3);
  EXPECT_LT(mean_std, 10.0);
  EXPECT_GE(argmaxes.size(), 10u) << "greedy predictions barely depend on the input";
  RecordProperty("logit_std", std::to_string(mean_std));
  RecordProperty("distinct_argmax", static_cast<int>(argmaxes.size()));
}

INSTANTIATE_TEST_SUITE_P(Archs, SynthForward,
                         testing::Values(ForwardCase{"llama", "F16", false, 4}, ForwardCase{"llama", "Q4_0", true, 12},
                                         ForwardCase{"qwen2", "Q8_0", false, 4},
                                         ForwardCase{"qwen3", "Q4_K_M", true, 4}),
                         [](const testing::TestParamInfo<ForwardCase>& info) {
                           return std::string(info.param.arch) + "_" + info.param.type;
                         });

}  // namespace
}  // namespace sf
