// The teacher pass (the target's forward pass over every training window, in distill and
// train-adapter) reports progress once a second instead of sitting silent for minutes on a
// large target.
#include <gtest/gtest.h>

#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

TEST(Progress, DistillTeacherPassReportsProgress) {
  const std::string dir = sf::test::per_test_scratch_dir();
  // Up to 1000 windows of 128 tokens (the shared corpus holds about 300): a line every second
  // while the pass runs and a last one when it is done, so a pass shorter than a second (as
  // this one is on a quiet machine) still reports itself.
  const auto r = sf::test::run_specflash(
      {"distill", "--target", sf::test::source_path("models/stories260K.gguf"), "--out", dir + "/draft.gguf", "--data",
       sf::test::shared_path("datasets/tinystories"), "--max-train-tokens", "128000", "--steps", "1"},
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("distill: teacher pass (train): "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" windows, "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", done\n"), std::string::npos) << r.err;
}

// The other trainers share the teacher pass; its lines name the command that runs it.
TEST(Progress, TrainAdapterTeacherPassNamesItsCommand) {
  const std::string dir = sf::test::per_test_scratch_dir();
  const auto r =
      sf::test::run_specflash({"train-adapter", "--target", sf::test::source_path("models/stories260K.gguf"), "--layer",
                               "1", "--out", dir + "/adapter.gguf", "--data",
                               sf::test::shared_path("datasets/tinystories"), "--max-windows", "16", "--steps", "1"},
                              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("train-adapter: teacher pass (train): "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("distill: teacher pass"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", done\n"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sf
