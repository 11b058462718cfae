// AdamW, the schedule, clipping, and the training loop's determinism and resume, on a
// tiny draft with a synthetic teacher (no model file needed).
#include "train/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "test_paths.h"
#include "train/optimizer.h"

namespace sf::train {
namespace {

TEST(AdamW, FirstStepMovesByLrWithBiasCorrection) {
  // With bias correction, m_hat = g and v_hat = g^2 after one step, so each parameter
  // moves by lr * sign(g) (plus decoupled decay lr * wd * p on masked entries).
  AdamW opt({0.1f, 0.9f, 0.95f, 1e-12f, 0.5f}, 3);
  std::vector<float> p = {1.0f, 1.0f, 1.0f}, g = {2.0f, -0.001f, 3.0f};
  opt.step(p.data(), g.data(), 0.1f, {1, 1, 0});
  EXPECT_NEAR(p[0], 1.0f - 0.1f * 0.5f - 0.1f, 1e-6);
  EXPECT_NEAR(p[1], 1.0f - 0.1f * 0.5f + 0.1f, 1e-6);
  EXPECT_NEAR(p[2], 1.0f - 0.1f, 1e-6);
}

TEST(Schedule, WarmupThenCosine) {
  EXPECT_NEAR(cosine_lr(0, 100, 10, 1.0f, 0.1f), 0.1f, 1e-6);
  EXPECT_NEAR(cosine_lr(9, 100, 10, 1.0f, 0.1f), 1.0f, 1e-6);
  EXPECT_NEAR(cosine_lr(10, 100, 10, 1.0f, 0.1f), 1.0f, 1e-6);
  EXPECT_NEAR(cosine_lr(99, 100, 10, 1.0f, 0.1f), 0.1f, 1e-6);
  EXPECT_NEAR(cosine_lr(10 + 89 / 2, 100, 10, 1.0f, 0.1f), 0.55f, 0.02);
}

TEST(Clip, ScalesToMaxNorm) {
  std::vector<float> g = {3.0f, 4.0f};
  EXPECT_NEAR(clip_grad_norm(g.data(), 2, 1.0), 5.0, 1e-9);
  EXPECT_NEAR(std::hypot(g[0], g[1]), 1.0, 1e-5);
  std::vector<float> h = {0.3f, 0.4f};
  clip_grad_norm(h.data(), 2, 1.0);
  EXPECT_EQ(h[0], 0.3f);
}

DraftConfig tiny_config() {
  DraftConfig c;
  c.n_vocab = 32;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.n_ff = 24;
  return c;
}

// Teacher: next token = (token * 3 + 1) % V with high confidence, so there is something to learn.
TeacherData synthetic_data(int n_windows, int L, int k, int V) {
  TeacherData d;
  d.seq_len = L;
  d.k = k;
  std::mt19937 rng(3);
  for (int w = 0; w < n_windows; ++w)
    for (int i = 0; i < L; ++i) {
      const int32_t t = static_cast<int32_t>(rng() % V);
      d.tokens.push_back(t);
      std::vector<float> logits(V, 0.0f);
      logits[(t * 3 + 1) % V] = 5.0f;
      logits[(t + 7) % V] = 2.0f;
      double s = 0;
      for (float l : logits) s += std::exp(l);
      d.lse.push_back(static_cast<float>(std::log(s)));
      std::vector<int32_t> order(V);
      for (int v = 0; v < V; ++v) order[v] = v;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
      for (int j = 0; j < k; ++j) {
        d.ids.push_back(order[j]);
        d.logits.push_back(logits[order[j]]);
      }
    }
  return d;
}

TrainOptions tiny_options() {
  TrainOptions o;
  o.steps = 30;
  o.batch = 4;
  o.lr = 1e-2f;
  o.warmup = 5;
  o.seed = 7;
  o.progress = false;
  return o;
}

TEST(Trainer, SameSeedSameDataGiveIdenticalWeights) {
  const DraftConfig c = tiny_config();
  const TeacherData d = synthetic_data(12, 8, 4, c.n_vocab);
  ThreadPool pool1(1), pool2(2);
  auto a = train_draft(c, d, tiny_options(), pool1);
  auto b = train_draft(c, d, tiny_options(), pool2);  // a different thread count too
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->params.size(), b->params.size());
  EXPECT_EQ(std::memcmp(a->params.data(), b->params.data(), a->params.size() * sizeof(float)), 0);
  TrainOptions other = tiny_options();
  other.seed = 8;
  auto c2 = train_draft(c, d, other, pool1);
  ASSERT_TRUE(c2.ok());
  EXPECT_NE(std::memcmp(a->params.data(), c2->params.data(), a->params.size() * sizeof(float)), 0);
}

TEST(Trainer, LearnsTheTeacher) {
  const DraftConfig c = tiny_config();
  const TeacherData d = synthetic_data(12, 8, 4, c.n_vocab);
  ThreadPool pool(2);
  TrainOptions o = tiny_options();
  o.steps = 150;
  const Agreement before = evaluate_agreement(c, init_params(c, o.seed), d, o.loss, pool);
  auto r = train_draft(c, d, o, pool);
  ASSERT_TRUE(r.ok());
  const Agreement after = evaluate_agreement(c, r->params, d, o.loss, pool);
  EXPECT_LT(after.loss, before.loss * 0.5);
  EXPECT_GT(after.top1, 0.9);
}

TEST(Trainer, ResumeFromCheckpointEqualsOneRun) {
  const DraftConfig c = tiny_config();
  const TeacherData d = synthetic_data(12, 8, 4, c.n_vocab);
  ThreadPool pool(2);
  const std::string ckpt = test::scratch_dir("train_resume") + "/draft.ckpt";
  TrainOptions full = tiny_options();
  auto straight = train_draft(c, d, full, pool);
  ASSERT_TRUE(straight.ok());

  // Resuming a finished run's final checkpoint does nothing more and gives its weights.
  TrainOptions first = tiny_options();
  first.checkpoint = ckpt;
  first.checkpoint_every = 10;
  auto part = train_draft(c, d, first, pool);
  ASSERT_TRUE(part.ok());
  TrainOptions again = first;
  again.resume = true;
  auto resumed = train_draft(c, d, again, pool);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(resumed->resumed_from, 30);
  EXPECT_EQ(std::memcmp(resumed->params.data(), straight->params.data(), straight->params.size() * sizeof(float)), 0);

  // A real interruption: a 60-step schedule checkpointed at 20, resumed to the end,
  // equals the uninterrupted 60-step run.
  TrainOptions long_run = tiny_options();
  long_run.steps = 60;
  auto uninterrupted = train_draft(c, d, long_run, pool);
  ASSERT_TRUE(uninterrupted.ok());
  TrainOptions interrupted = long_run;
  interrupted.checkpoint = ckpt + ".60";
  interrupted.checkpoint_every = 20;
  interrupted.stop_after = 20;
  auto head = train_draft(c, d, interrupted, pool);
  ASSERT_TRUE(head.ok());
  interrupted.stop_after = 0;
  interrupted.resume = true;
  auto tail = train_draft(c, d, interrupted, pool);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->resumed_from, 20);
  EXPECT_EQ(std::memcmp(tail->params.data(), uninterrupted->params.data(), tail->params.size() * sizeof(float)), 0);

  TrainOptions wrong = interrupted;
  wrong.seed = 99;
  auto bad = train_draft(c, d, wrong, pool);
  EXPECT_FALSE(bad.ok());
  std::remove(ckpt.c_str());
}

}  // namespace
}  // namespace sf::train
