// The shared training loop (train/train_loop.h) on a toy least-squares problem with random
// batches: resuming a checkpoint equals one uninterrupted run bit for bit, and checkpoints
// from another run, truncated, corrupt or foreign files are refused with messages that say
// what is wrong.
#include "train/train_loop.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "test_paths.h"

namespace sf::train {
namespace {

constexpr int kDim = 6, kRows = 40, kBatch = 5;

// y = A x* for a fixed x*: rows of A and targets y.
struct Toy {
  std::vector<float> a, y;
  Toy() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int r = 0; r < kRows; ++r) {
      float dot = 0;
      for (int c = 0; c < kDim; ++c) {
        a.push_back(u(rng));
        dot += a.back() * static_cast<float>(c + 1);
      }
      y.push_back(dot);
    }
  }
};

LoopOptions toy_options(const std::string& checkpoint) {
  LoopOptions o;
  o.steps = 60;
  o.lr = 0.3f;
  o.warmup = 4;
  o.checkpoint = checkpoint;
  o.checkpoint_every = 10;
  o.identity = {{"shape", "toy"}, {"seed", "3"}};
  return o;
}

Result<LoopResult> train(const Toy& toy, const LoopOptions& o, std::vector<float>& params) {
  params.assign(kDim, 0.0f);
  BatchSampler sampler(3, kRows, kBatch);
  return run_train_loop(params, {}, o, [&](int64_t step, const float* p, float* grad) {
    std::fill(grad, grad + kDim, 0.0f);
    double loss = 0;
    for (int64_t r : sampler.batch(step)) {
      float e = -toy.y[r];
      for (int c = 0; c < kDim; ++c) e += p[c] * toy.a[r * kDim + c];
      loss += 0.5 * e * e / kBatch;
      for (int c = 0; c < kDim; ++c) grad[c] += e * toy.a[r * kDim + c] / kBatch;
    }
    return loss;
  });
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void spit(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

void expect_error(const Result<LoopResult>& r, const std::string& fragment) {
  ASSERT_FALSE(r.ok()) << "expected an error containing: " << fragment;
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
}

TEST(TrainLoop, ResumeEqualsOneRunAndKeepsTheLossWindow) {
  const Toy toy;
  const std::string dir = test::scratch_dir("train_loop_resume");
  std::vector<float> straight, resumed;
  auto a = train(toy, toy_options(""), straight);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // About 15 at x = 0: the toy problem must actually be learnt.
  EXPECT_LT(a->final_loss, 1.0) << "the toy problem must actually be learnt";

  LoopOptions first = toy_options(dir + "/ckpt");
  first.stop_after = 13;  // not a multiple of checkpoint_every: the stop itself checkpoints
  auto head = train(toy, first, resumed);
  ASSERT_TRUE(head.ok()) << head.status().message();
  EXPECT_EQ(head->last_step, 13);
  EXPECT_NE(std::memcmp(resumed.data(), straight.data(), kDim * sizeof(float)), 0);
  LoopOptions second = toy_options(dir + "/ckpt");
  second.resume = true;
  auto tail = train(toy, second, resumed);
  ASSERT_TRUE(tail.ok()) << tail.status().message();
  EXPECT_EQ(tail->resumed_from, 13);
  EXPECT_EQ(std::memcmp(resumed.data(), straight.data(), kDim * sizeof(float)), 0);
  EXPECT_EQ(tail->final_loss, a->final_loss) << "the last-20 loss window travels in the checkpoint";

  // --resume without a checkpoint file starts fresh.
  LoopOptions fresh = toy_options(dir + "/absent");
  fresh.resume = true;
  auto f = train(toy, fresh, resumed);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->resumed_from, 0);
}

TEST(TrainLoop, RefusesCheckpointsOfOtherRunsAndDamagedFiles) {
  const Toy toy;
  const std::string dir = test::scratch_dir("train_loop_refuse");
  const std::string ckpt = dir + "/ckpt";
  std::vector<float> p;
  LoopOptions o = toy_options(ckpt);
  o.stop_after = 10;
  ASSERT_TRUE(train(toy, o, p).ok());
  const std::string good = slurp(ckpt);
  ASSERT_GT(good.size(), 100u);
  o.stop_after = 0;
  o.resume = true;

  LoopOptions other = o;
  other.identity = {{"shape", "toy"}, {"seed", "4"}, {"role", "draft"}};
  expect_error(train(toy, other, p), "seed 4 here, 3 in the checkpoint; role draft here, (none) in the checkpoint");

  spit(ckpt, good.substr(0, good.size() - 9));
  expect_error(train(toy, o, p), "truncated");
  spit(ckpt, good.substr(0, 12));
  expect_error(train(toy, o, p), "truncated");

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;  // inside the weights
  spit(ckpt, flipped);
  expect_error(train(toy, o, p), "checksum mismatch");

  spit(ckpt, "SFDCKPT1 and the rest of an old distill checkpoint");
  expect_error(train(toy, o, p), "older specflash");
  spit(ckpt, "hello");
  expect_error(train(toy, o, p), "not a specflash training checkpoint");

  spit(ckpt, good);
  LoopOptions shorter = o;
  shorter.steps = 5;
  expect_error(train(toy, shorter, p), "past --steps 5");
  EXPECT_TRUE(train(toy, o, p).ok()) << "the good file still resumes";
}

TEST(TrainLoop, EveryTruncationAndEveryByteFlipIsRefused) {
  const Toy toy;
  const std::string ckpt = test::scratch_dir("train_loop_every_byte") + "/ckpt";
  std::vector<float> p;
  LoopOptions o = toy_options(ckpt);
  o.stop_after = 10;
  ASSERT_TRUE(train(toy, o, p).ok());
  const std::string good = slurp(ckpt);
  o.stop_after = 0;
  o.resume = true;
  for (size_t n = 0; n < good.size(); ++n) {
    spit(ckpt, good.substr(0, n));
    EXPECT_FALSE(train(toy, o, p).ok()) << "cut at " << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x40;
    spit(ckpt, bad);
    EXPECT_FALSE(train(toy, o, p).ok()) << "byte " << i << " flipped";
  }
}

TEST(BatchSampler, SkippingStepsGivesTheSameBatches) {
  BatchSampler all(9, 17, 3), skipping(9, 17, 3);
  std::vector<int64_t> at5;
  for (int64_t s = 0; s <= 5; ++s) at5 = all.batch(s);
  EXPECT_EQ(skipping.batch(5), at5);
  EXPECT_EQ(skipping.batch(6), all.batch(6));
  for (int64_t i : at5) EXPECT_TRUE(i >= 0 && i < 17);
}

}  // namespace
}  // namespace sf::train
