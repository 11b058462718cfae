// Where `--spec auto` keeps what it learnt between runs (spec/auto_profile.h), end to end on
// the repository's own models: by default under $XDG_CACHE_HOME, in --auto-profile-dir when
// given, nowhere with `none`; the bench uses a directory of its own per run and says so in
// its report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

using sf::test::CommandResult;

std::string scratch() { return sf::test::per_test_scratch_dir(); }
CommandResult run(const std::vector<std::string>& args) { return sf::test::run_specflash(args, scratch()); }
std::string stories() { return sf::test::source_path("models/stories260K.gguf"); }
std::string draft() { return sf::test::source_path("models/stories260K-draft.gguf"); }

std::vector<std::string> profile_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) files.push_back(e.path().string());
  return files;
}

CommandResult run_auto(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", "-m", stories(), "--draft", draft(), "-p", "Once upon a time",
                                   "-n",  "24", "--temp",  "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

TEST(AutoProfileCli, KeptInTheUsersCacheByDefault) {
  const CommandResult r = run_auto({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The runner sets XDG_CACHE_HOME to scratch/xdg-cache for every run.
  const auto files = profile_files(scratch() + "/xdg-cache/specflash/auto");
  ASSERT_EQ(files.size(), 1u);
  const auto j = nlohmann::json::parse(sf::test::read_file(files[0]));
  EXPECT_EQ(j["generations"], 1);
  EXPECT_NE(j["key"].get<std::string>().find("stories260K.gguf"), std::string::npos) << j["key"];
  EXPECT_NE(j["key"].get<std::string>().find("stories260K-draft.gguf"), std::string::npos) << j["key"];
  EXPECT_FALSE(j["arms"].empty()) << "the arms it measured";
}

TEST(AutoProfileCli, NoneKeepsNothingAndADirectoryIsUsedAcrossRuns) {
  const CommandResult none = run_auto({"--auto-profile-dir", "none"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_FALSE(std::filesystem::exists(scratch() + "/xdg-cache/specflash")) << "none: nothing written";

  const std::string dir = scratch() + "/mine";
  const CommandResult plain =
      run({"run", "-m", stories(), "-p", "Once upon a time", "-n", "24", "--temp", "0", "--spec", "none"});
  for (int i = 0; i < 2; ++i) {
    const CommandResult r = run_auto({"--auto-profile-dir", dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out) << "lossless, whatever auto starts from";
  }
  const auto files = profile_files(dir);
  ASSERT_EQ(files.size(), 1u) << "one setting, one file";
  EXPECT_EQ(nlohmann::json::parse(sf::test::read_file(files[0]))["generations"], 2) << "the second run built on it";
  // Another budget is another setting.
  ASSERT_EQ(run_auto({"--auto-profile-dir", dir, "--mem-budget", "50%"}).exit_code, 0);
  EXPECT_EQ(profile_files(dir).size(), 2u);
}

TEST(AutoProfileCli, AnUnwritableDirectoryWarnsAndTheRunGoesOn) {
  const std::string file = scratch() + "/not-a-directory";
  std::ofstream(file) << "x";
  const CommandResult r = run_auto({"--auto-profile-dir", file + "/auto"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("what auto learns is not kept"), std::string::npos) << r.err;
}

TEST(AutoProfileCli, BenchKeepsItsOwnProfilesAndSaysSo) {
  const std::string prompts = scratch() + "/prompts.txt";
  std::ofstream(prompts) << "Once upon a time\nThe little dog\n";
  const std::string json = scratch() + "/bench.json";
  std::vector<std::string> args = {"bench",
                                   "-m",
                                   stories(),
                                   "--draft",
                                   draft(),
                                   "--prompt-file",
                                   prompts,
                                   "-n",
                                   "16",
                                   "--methods",
                                   "flash-ar,auto,auto-cold",
                                   "--budgets",
                                   "100%",
                                   "--repeat",
                                   "2",
                                   "--json",
                                   json};
  const CommandResult r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("auto's profile: kept per row for this bench run only"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(scratch() + "/xdg-cache/specflash")) << "the user's cache is not touched";
  const auto j = nlohmann::json::parse(sf::test::read_file(json));
  EXPECT_TRUE(j["meta"]["auto_profile"].is_string());
  int auto_rows = 0;
  for (const auto& row : j["rows"]) {
    const std::string m = row["method"];
    if (m == "auto" || m == "auto-cold") {
      ++auto_rows;
      EXPECT_EQ(row["equal_to_ar"], row["compared_to_ar"]) << m << " is lossless";
      EXPECT_FALSE(row["auto_policies"].empty()) << m;
    }
  }
  EXPECT_EQ(auto_rows, 2);
  // A directory given: the bench uses (and leaves) it.
  const std::string dir = scratch() + "/bench-profiles";
  args.insert(args.end(), {"--auto-profile-dir", dir});
  const CommandResult kept = run(args);
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(profile_files(dir).size(), 1u) << "auto's row at 100% (auto-cold keeps none)";
}

}  // namespace
}  // namespace sf
