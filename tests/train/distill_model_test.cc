// Export of a trained draft and the distill pipeline on the real stories260K target:
// the exported GGUF loads with Model::load, shares the target's vocabulary, and the
// engine's forward logits equal the trainer's; bad input gives clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "engine/session.h"
#include "gguf/gguf_writer.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/model.h"
#include "model/transformer.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"
#include "train/distill.h"
#include "train/draft_export.h"

namespace sf::train {
namespace {

std::string target_path() { return test::shared_path("models/stories260K.gguf"); }

DraftConfig small_config() {
  DraftConfig c;
  c.n_vocab = 512;
  c.n_embd = 32;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.n_ff = 48;
  c.n_ctx = 128;
  return c;
}

TEST(DraftExport, LoadsAndMatchesTrainerForward) {
  auto target = gguf::GgufFile::open(target_path());
  ASSERT_TRUE(target.ok()) << target.status().message();
  const DraftConfig c = small_config();
  std::vector<float> params = init_params(c, 5);
  std::mt19937 rng(1);
  for (auto& p : params) p += std::normal_distribution<float>(0.0f, 0.1f)(rng);  // non-trivial weights
  const std::string path = test::scratch_dir("draft_export") + "/draft.gguf";
  ASSERT_TRUE(export_draft_gguf(c, params, *target, path).ok());

  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const ModelHParams& hp = (*model)->hparams();
  EXPECT_EQ(hp.n_layer, 2);
  EXPECT_EQ(hp.n_embd, 32);
  EXPECT_EQ(hp.n_head_kv, 2);
  auto tok_draft = Tokenizer::from_gguf((*model)->file());
  auto tok_target = Tokenizer::from_gguf(*target);
  ASSERT_TRUE(tok_draft.ok() && tok_target.ok());
  EXPECT_TRUE(tok_draft->same_vocabulary(*tok_target));

  std::vector<int32_t> tokens = {1, 403, 261, 378, 9, 300, 42, 17, 511, 0, 88, 250, 13};
  const int64_t n = static_cast<int64_t>(tokens.size());
  ThreadPool pool(2);
  Transformer tr(hp, pool);
  KvCache cache(hp.n_layer, 64, hp.n_head_kv, hp.head_dim);
  ForwardBatch batch = ForwardBatch::causal(tokens, 0);
  std::vector<float> hidden(n * hp.n_embd), engine(n * hp.n_vocab);
  tr.embed((*model)->weights(), tokens.data(), n, hidden.data());
  tr.run_layers((*model)->weights(), batch, 0, hp.n_layer, cache, hidden.data());
  tr.logits((*model)->weights(), hidden.data(), n, engine.data());

  DraftModelRunner<float> runner(c, &pool);
  // The engine keeps K/V in IEEE half; the trainer rounds them the same way for this check.
  const std::vector<float>& mine = runner.forward(params.data(), tokens.data(), 1, n, /*round_kv_to_half=*/true);
  double worst = 0;
  for (int64_t i = 0; i < n * hp.n_vocab; ++i) worst = std::max(worst, std::fabs(double(mine[i]) - engine[i]));
  std::printf("max abs logit difference engine vs trainer: %.3g\n", worst);
  EXPECT_LT(worst, 1e-4);
}

TEST(DraftExport, F16ExportLoadsAndStaysClose) {
  auto target = gguf::GgufFile::open(target_path());
  ASSERT_TRUE(target.ok());
  const DraftConfig c = small_config();
  std::vector<float> params = init_params(c, 6);
  const std::string dir = test::scratch_dir("draft_export_f16");
  ASSERT_TRUE(export_draft_gguf(c, params, *target, dir + "/draft.gguf", /*f16=*/true).ok());
  auto model = Model::load(dir + "/draft.gguf");
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->weights().layers[0].wq.type, GgmlType::F16);
  std::vector<int32_t> tokens = {1, 403, 261, 378, 9};
  const int64_t n = 5;
  const ModelHParams& hp = (*model)->hparams();
  ThreadPool pool(1);
  Transformer tr(hp, pool);
  KvCache cache(hp.n_layer, 16, hp.n_head_kv, hp.head_dim);
  std::vector<float> hidden(n * hp.n_embd), engine(n * hp.n_vocab);
  tr.embed((*model)->weights(), tokens.data(), n, hidden.data());
  tr.run_layers((*model)->weights(), ForwardBatch::causal(tokens, 0), 0, hp.n_layer, cache, hidden.data());
  tr.logits((*model)->weights(), hidden.data(), n, engine.data());
  DraftModelRunner<float> runner(c, &pool);
  const std::vector<float>& mine = runner.forward(params.data(), tokens.data(), 1, n, true);
  double worst = 0;
  for (int64_t i = 0; i < n * hp.n_vocab; ++i) worst = std::max(worst, std::fabs(double(mine[i]) - engine[i]));
  EXPECT_LT(worst, 1e-2);  // weights rounded to half (~5e-4 relative)
}

DistillOptions tiny_distill(const std::string& out) {
  DistillOptions o;
  o.target_path = target_path();
  o.out_path = out;
  o.data = {test::shared_path("datasets/tinystories/tinystories_sample.txt")};
  o.draft = small_config();
  o.seq_len = 32;
  o.top_k = 8;
  o.n_threads = 2;
  o.train.steps = 10;
  o.train.batch = 4;
  o.train.progress = false;
  return o;
}

TEST(Distill, EndToEndDraftIsAcceptedByTheEngine) {
  const std::string out = test::scratch_dir("distill_e2e") + "/draft.gguf";
  auto r = run_distill(tiny_distill(out));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->train_windows, 10);
  EXPECT_GT(r->heldout_windows, 0);
  EXPECT_GT(r->heldout.positions, 0);

  SessionOptions so;
  so.model_path = target_path();
  so.n_threads = 2;
  so.spec.method = SpecConfig::Method::kChain;
  so.spec.draft_model_path = out;
  so.spec.draft_len = 2;
  auto session = Session::create(so);
  ASSERT_TRUE(session.ok()) << session.status().message();
  auto prompt = (*session)->tokenize("Once upon a time");
  ASSERT_TRUE(prompt.ok());
  SamplingParams greedy;
  greedy.temperature = 0;
  auto stats = (*session)->generate(*prompt, 16, greedy, true, [](int32_t, const std::string&) { return true; });
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_GT(stats->spec.cycles, 0u);
}

TEST(Distill, TargetWithoutVocabularyIsAnError) {
  const std::string dir = test::scratch_dir("distill_novocab");
  gguf::GgufWriter empty;
  empty.set("general.architecture", gguf::Value::string("llama"));
  ASSERT_TRUE(empty.write(dir + "/empty.gguf").ok());
  auto no_vocab = gguf::GgufFile::open(dir + "/empty.gguf");
  ASSERT_TRUE(no_vocab.ok());
  DraftConfig c = small_config();
  ASSERT_TRUE(export_draft_gguf(c, init_params(c, 1), *no_vocab, dir + "/novocab.gguf").ok());
  DistillOptions o = tiny_distill(dir + "/out.gguf");
  o.target_path = dir + "/novocab.gguf";
  auto r = run_distill(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no vocabulary"), std::string::npos) << r.status().message();
}

TEST(Distill, DataShorterThanContextIsAnError) {
  const std::string dir = test::scratch_dir("distill_short");
  FILE* f = std::fopen((dir + "/short.txt").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("Once upon a time there was a cat.", f);
  std::fclose(f);
  DistillOptions o = tiny_distill(dir + "/out.gguf");
  o.data = {dir + "/short.txt"};
  o.seq_len = 128;
  auto r = run_distill(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fewer than one context"), std::string::npos) << r.status().message();
}

TEST(Distill, DraftWiderThanTargetIsAnError) {
  DistillOptions o = tiny_distill(test::scratch_dir("distill_wide") + "/out.gguf");
  o.draft.n_embd = 128;  // stories260K has 64
  o.draft.n_head = 8;
  auto r = run_distill(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("wider than the target"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace sf::train
