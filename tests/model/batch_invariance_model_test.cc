// A token's logits must not depend on how it was batched: causal prefill, one token at a
// time, and a branching tree batch with an ancestor mask must agree bit for bit. This is
// what lets greedy speculative decoding equal plain decoding exactly.
#include <gtest/gtest.h>

#include <vector>

#include "kv/kv_cache.h"
#include "model/model.h"
#include "model/transformer.h"
#include "test_paths.h"

namespace sf {
namespace {

class BatchInvariance : public ::testing::TestWithParam<const char*> {};

std::vector<float> step_logits(Transformer& tf, const Model& m, KvCache& cache, int32_t token, int32_t pos) {
  const auto& hp = m.hparams();
  std::vector<float> h(hp.n_embd), logits(hp.n_vocab);
  tf.embed(m.weights(), &token, 1, h.data());
  tf.run_layers(m.weights(), ForwardBatch::causal({token}, pos), 0, hp.n_layer, cache, h.data());
  tf.logits(m.weights(), h.data(), 1, logits.data());
  return logits;
}

TEST_P(BatchInvariance, PrefillSequentialAndTreeAgreeBitForBit) {
  auto loaded = Model::load(test::shared_path(GetParam()));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Model& m = **loaded;
  const auto& hp = m.hparams();
  ThreadPool pool(2);
  pool.set_min_chunk_work(1);  // split even these small shapes between the threads
  Transformer tf(hp, pool);
  const std::vector<int32_t> tokens = {1, 403, 407, 261, 378, 432, 383, 322};
  const int64_t n = static_cast<int64_t>(tokens.size());

  // Causal prefill of all tokens, logits for every row.
  KvCache cache_a(hp.n_layer, 32, hp.n_head_kv, hp.head_dim);
  std::vector<float> hidden(n * hp.n_embd), prefill(n * hp.n_vocab);
  tf.embed(m.weights(), tokens.data(), n, hidden.data());
  tf.run_layers(m.weights(), ForwardBatch::causal(tokens, 0), 0, hp.n_layer, cache_a, hidden.data());
  tf.logits(m.weights(), hidden.data(), n, prefill.data());

  // One token at a time.
  KvCache cache_b(hp.n_layer, 32, hp.n_head_kv, hp.head_dim);
  for (int64_t i = 0; i < n; ++i) {
    const auto step = step_logits(tf, m, cache_b, tokens[i], static_cast<int32_t>(i));
    for (int v = 0; v < hp.n_vocab; ++v) ASSERT_EQ(step[v], prefill[i * hp.n_vocab + v]) << "row " << i;
  }

  // A tree after a 5-token prefix: rows A=tokens[5] (depth 0), B=tokens[6] child of A,
  // C=tokens[6]... as a sibling branch: C is another child of A with a different token.
  // Row B must equal the sequential logits of position 6.
  KvCache cache_c(hp.n_layer, 32, hp.n_head_kv, hp.head_dim);
  const std::vector<int32_t> prefix(tokens.begin(), tokens.begin() + 5);
  std::vector<float> hp_prefix(5 * hp.n_embd);
  tf.embed(m.weights(), prefix.data(), 5, hp_prefix.data());
  tf.run_layers(m.weights(), ForwardBatch::causal(prefix, 0), 0, hp.n_layer, cache_c, hp_prefix.data());
  ForwardBatch tree;
  tree.tokens = {tokens[5], 17, tokens[6]};  // A, C (sibling branch, child of A), B (child of A)
  tree.positions = {5, 6, 6};
  tree.kv_cells = {5, 6, 7};
  tree.n_kv = 8;
  tree.mask.assign(3 * 8, 0);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) tree.mask[r * 8 + c] = 1;  // the prefix
  tree.mask[0 * 8 + 5] = 1;                                // A sees itself
  tree.mask[1 * 8 + 5] = tree.mask[1 * 8 + 6] = 1;         // C sees A and itself
  tree.mask[2 * 8 + 5] = tree.mask[2 * 8 + 7] = 1;         // B sees A and itself, not C
  std::vector<float> th(3 * hp.n_embd), tl(3 * hp.n_vocab);
  tf.embed(m.weights(), tree.tokens.data(), 3, th.data());
  tf.run_layers(m.weights(), tree, 0, hp.n_layer, cache_c, th.data());
  tf.logits(m.weights(), th.data(), 3, tl.data());
  for (int v = 0; v < hp.n_vocab; ++v) {
    ASSERT_EQ(tl[0 * hp.n_vocab + v], prefill[5 * hp.n_vocab + v]) << "tree row A";
    ASSERT_EQ(tl[2 * hp.n_vocab + v], prefill[6 * hp.n_vocab + v]) << "tree row B";
  }
}

TEST_P(BatchInvariance, LayerRangesComposeAndExposeHiddenState) {
  auto loaded = Model::load(test::shared_path(GetParam()));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Model& m = **loaded;
  const auto& hp = m.hparams();
  ASSERT_GE(hp.n_layer, 2);
  ThreadPool pool(2);
  pool.set_min_chunk_work(1);  // split even these small shapes between the threads
  Transformer tf(hp, pool);
  const std::vector<int32_t> tokens = {1, 403, 407};
  KvCache c1(hp.n_layer, 8, hp.n_head_kv, hp.head_dim), c2(hp.n_layer, 8, hp.n_head_kv, hp.head_dim);
  std::vector<float> full(3 * hp.n_embd), split(3 * hp.n_embd);
  tf.embed(m.weights(), tokens.data(), 3, full.data());
  split = full;
  const auto batch = ForwardBatch::causal(tokens, 0);
  tf.run_layers(m.weights(), batch, 0, hp.n_layer, c1, full.data());
  tf.run_layers(m.weights(), batch, 0, 1, c2, split.data());
  const std::vector<float> tap = split;  // hidden state after layer 0
  tf.run_layers(m.weights(), batch, 1, hp.n_layer, c2, split.data());
  EXPECT_EQ(full, split);
  EXPECT_NE(tap, split);
}

INSTANTIATE_TEST_SUITE_P(Models, BatchInvariance,
                         ::testing::Values("models/stories260K.gguf", "reference/models/synth-qwen3-tok512-Q8_0.gguf",
                                           "reference/models/synth-llama-tok512-Q4_K_M.gguf"),
                         [](const auto& info) {
                           std::string s = info.param;
                           s = s.substr(s.rfind('/') + 1);
                           s = s.substr(0, s.find(".gguf"));
                           for (auto& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace sf
