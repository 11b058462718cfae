// `specflash train-adapter` checkpoints on stories260K: training N steps straight writes
// the same adapter, byte for byte, as k steps + checkpoint + resume; a checkpoint of
// another target, role or layer, and a truncated or corrupt one, are refused by the
// command with a non-zero exit and a message naming what is wrong.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "specflash_runner.h"
#include "test_paths.h"
#include "train/adapter_trainer.h"

namespace sf {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

train::AdapterPipelineOptions small_run(const std::string& out) {
  train::AdapterPipelineOptions o;
  o.target_path = test::source_path("models/stories260K.gguf");
  o.out_path = out;
  o.data = {test::shared_path("datasets/tinystories/validation_100.txt")};
  o.layer = 1;
  o.max_windows = 24;
  o.n_threads = 2;
  o.train.steps = 12;
  o.train.batch_windows = 4;
  return o;
}

TEST(AdapterCheckpoint, ResumedRunWritesTheSameAdapter) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = test::scratch_dir("adapter_ckpt_resume");
  auto straight = train::run_train_adapter(small_run(dir + "/straight.gguf"));
  ASSERT_TRUE(straight.ok()) << straight.status().message();
  EXPECT_EQ(straight->resumed_from, 0);

  train::AdapterPipelineOptions first = small_run(dir + "/first.gguf");
  first.train.checkpoint = dir + "/run.ckpt";
  first.train.checkpoint_every = 4;
  first.train.stop_after = 7;  // interrupted between two periodic checkpoints
  auto head = train::run_train_adapter(first);
  ASSERT_TRUE(head.ok()) << head.status().message();
  EXPECT_EQ(head->steps_done, 7);
  EXPECT_NE(slurp(dir + "/first.gguf"), slurp(dir + "/straight.gguf")) << "7 of 12 steps is another adapter";

  train::AdapterPipelineOptions rest = small_run(dir + "/resumed.gguf");
  rest.train.checkpoint = dir + "/run.ckpt";
  rest.train.checkpoint_every = 4;
  rest.train.resume = true;
  auto tail = train::run_train_adapter(rest);
  ASSERT_TRUE(tail.ok()) << tail.status().message();
  EXPECT_EQ(tail->resumed_from, 7);
  EXPECT_EQ(tail->steps_done, 12);
  const std::string want = slurp(dir + "/straight.gguf");
  ASSERT_GT(want.size(), 1000u);
  EXPECT_EQ(slurp(dir + "/resumed.gguf"), want) << "resume must reproduce the uninterrupted run bit for bit";
  EXPECT_DOUBLE_EQ(tail->heldout_top1_after, straight->heldout_top1_after);
  EXPECT_DOUBLE_EQ(tail->loss, straight->loss);
}

TEST(AdapterCheckpoint, CommandRefusesOtherRunsAndDamagedCheckpoints) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = test::scratch_dir("adapter_ckpt_cli");
  const std::string ckpt = dir + "/run.ckpt";
  const std::string stories = test::source_path("models/stories260K.gguf");
  auto cmd = [&](const std::string& role, const std::string& layer, const std::string& target) {
    std::vector<std::string> args = {"train-adapter", "--target", target, "--role", role, "--layer", layer};
    for (const char* a :
         {"--max-windows", "24", "--steps", "6", "--batch", "4", "-t", "2", "--checkpoint-every", "3", "--resume"})
      args.emplace_back(a);
    for (const std::string& a : {std::string("-o"), dir + "/a.gguf", std::string("--checkpoint"), ckpt,
                                 std::string("--data"), test::shared_path("datasets/tinystories/validation_100.txt")})
      args.push_back(a);
    return args;
  };
  const auto made = test::run_specflash(cmd("draft", "1", stories), dir);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.err.find("train-adapter: step 6/6"), std::string::npos) << "progress lines: " << made.err;
  const std::string good = slurp(ckpt);
  ASSERT_GT(good.size(), 1000u);
  const auto again = test::run_specflash(cmd("draft", "1", stories), dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("resumed from step 6"), std::string::npos) << again.out;

  const auto other_role = test::run_specflash(cmd("verifier", "1", stories), dir);
  EXPECT_NE(other_role.exit_code, 0);
  EXPECT_NE(other_role.err.find("role verifier here, draft in the checkpoint"), std::string::npos) << other_role.err;
  const auto other_layer = test::run_specflash(cmd("draft", "2", stories), dir);
  EXPECT_NE(other_layer.exit_code, 0);
  EXPECT_NE(other_layer.err.find("layer 2 here, 1 in the checkpoint"), std::string::npos) << other_layer.err;

  // Another model with the same tokenizer (so the same training tokens): only the target differs.
  const auto other_target =
      test::run_specflash(cmd("draft", "1", test::shared_path("reference/models/synth-llama-tok512-Q4_0.gguf")), dir);
  EXPECT_NE(other_target.exit_code, 0);
  EXPECT_NE(other_target.err.find("checkpoint is from another training run (target llama/"), std::string::npos)
      << other_target.err;
  EXPECT_EQ(other_target.err.find("role "), std::string::npos) << "only the target differs: " << other_target.err;

  std::ofstream(ckpt, std::ios::binary) << good.substr(0, good.size() / 2);
  const auto truncated = test::run_specflash(cmd("draft", "1", stories), dir);
  EXPECT_NE(truncated.exit_code, 0);
  EXPECT_NE(truncated.err.find("checkpoint is truncated"), std::string::npos) << truncated.err;

  std::string flipped = good;
  flipped[good.size() - 100] ^= 0x01;
  std::ofstream(ckpt, std::ios::binary) << flipped;
  const auto corrupt = test::run_specflash(cmd("draft", "1", stories), dir);
  EXPECT_NE(corrupt.exit_code, 0);
  EXPECT_NE(corrupt.err.find("checkpoint is corrupt (checksum mismatch)"), std::string::npos) << corrupt.err;
}

}  // namespace
}  // namespace sf
