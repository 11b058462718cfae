// AutoProfile: the file where auto keeps what it learnt between runs. It must read back
// exactly what was written, refuse what it cannot trust with a message naming the file,
// never leave a half-written file, and give each setting (key) its own file.
#include "spec/auto_profile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/output_file.h"
#include "gguf/per_test_scratch.h"
#include "spec/auto_tree_builder.h"
#include "spec/static_tree_builder.h"

namespace sf {
namespace {

AutoProfile sample_profile() {
  AutoProfile p;
  p.key = "model=a.gguf:123; budget=0%";
  p.generations = 7;
  p.catch_up_seconds_per_token = 2.5e-5;
  ArmEvidence e;
  e.tokens = 120.5;
  e.seconds = 0.75;
  e.weight = 31.25;
  e.tokens_sq = 900.125;
  e.seconds_sq = 0.0625;
  e.tokens_seconds = 4.5;
  p.arms.emplace_back("lever", e);
  e.tokens = 3;
  p.arms.emplace_back("plain", e);
  return p;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(AutoProfile, ReadsBackWhatItSaved) {
  const std::string path = test::per_test_scratch_dir() + "/p.json";
  const AutoProfile p = sample_profile();
  ASSERT_TRUE(p.save(path).ok());
  auto back = AutoProfile::load(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->key, p.key);
  EXPECT_EQ(back->generations, 7);
  EXPECT_EQ(back->catch_up_seconds_per_token, p.catch_up_seconds_per_token);
  ASSERT_EQ(back->arms.size(), 2u);
  const ArmEvidence* lever = back->find("lever");
  ASSERT_NE(lever, nullptr);
  EXPECT_EQ(lever->tokens, 120.5);
  EXPECT_EQ(lever->seconds, 0.75);
  EXPECT_EQ(lever->weight, 31.25);
  EXPECT_EQ(lever->tokens_sq, 900.125);
  EXPECT_EQ(lever->seconds_sq, 0.0625);
  EXPECT_EQ(lever->tokens_seconds, 4.5);
  EXPECT_EQ(back->find("plain")->tokens, 3);
  EXPECT_EQ(back->find("chain:8"), nullptr);
}

TEST(AutoProfile, RefusesWhatItCannotTrustNamingTheFile) {
  const std::string dir = test::per_test_scratch_dir();
  const auto refused = [&](const std::string& text, const std::string& part) {
    const std::string path = dir + "/bad.json";
    write_text(path, text);
    auto p = AutoProfile::load(path);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_NE(p.status().message().find(path), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find(part), std::string::npos) << p.status().message();
  };
  std::string good = sample_profile().to_json();
  refused("{\"format\": \"spec", "not a readable auto profile");  // truncated
  refused("[1, 2]", "not a readable auto profile");
  refused("{\"format\": \"something else\"}", "not an auto profile");
  std::string newer = good;
  newer.replace(newer.find("\"version\": 1"), 12, "\"version\": 9");
  refused(newer, "format 9");
  std::string negative = good;
  negative.replace(negative.find("\"seconds\": 0.75"), 15, "\"seconds\": -0.7");
  refused(negative, "arm lever: evidence out of range");
  EXPECT_FALSE(AutoProfile::load(dir + "/missing.json").ok());
}

TEST(AutoProfile, AFailedSaveLeavesTheOldFile) {
  const std::string path = test::per_test_scratch_dir() + "/p.json";
  AutoProfile p = sample_profile();
  ASSERT_TRUE(p.save(path).ok());
  p.generations = 8;
  {
    WriteFault disk_full;
    disk_full.fail_after_bytes = 10;
    ScopedWriteFault fault(disk_full);
    const Status s = p.save(path);
    EXPECT_FALSE(s.ok());
  }
  auto back = AutoProfile::load(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->generations, 7) << "the file before the failed save";
  for (const auto& entry : std::filesystem::directory_iterator(test::per_test_scratch_dir()))
    EXPECT_EQ(entry.path().filename(), "p.json") << "no temporary left behind";
}

TEST(AutoProfile, EachSettingHasItsOwnFile) {
  EXPECT_NE(auto_profile_path("/d", "model=a; budget=0%"), auto_profile_path("/d", "model=a; budget=50%"));
  EXPECT_EQ(auto_profile_path("/d", "k"), auto_profile_path("/d", "k"));
  EXPECT_EQ(auto_profile_path("/d", "k").rfind("/d/", 0), 0u);
}

TEST(AutoProfile, DefaultDirectoryFollowsTheCacheConvention) {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(default_auto_profile_directory(), "/x/cache/specflash/auto");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_auto_profile_directory(), "/h/.cache/specflash/auto");
  setenv("XDG_CACHE_HOME", "relative", 1);  // not absolute: ignored, as the convention says
  EXPECT_EQ(default_auto_profile_directory(), "/h/.cache/specflash/auto");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(default_auto_profile_directory(), "") << "nowhere to keep it: nothing is kept";
  if (old_xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

// AutoTreeBuilder keeps its arms' evidence by name: a later builder with the arms in
// another order, or with an arm more, starts each known arm from its own evidence.
TEST(AutoProfile, AutoTreeBuilderHandsEvidenceOverByArmName) {
  const auto chain = [](int n, const char* name) {
    return AutoArm{name, std::make_unique<StaticTreeBuilder>(std::vector<int>(static_cast<size_t>(n), 1), name)};
  };
  std::vector<AutoArm> arms;
  arms.push_back(chain(2, "chain:2"));
  arms.push_back(chain(4, "chain:4"));
  AutoTreeBuilder first(std::move(arms));
  TokenTree tree;
  CycleStats stats;
  stats.verify_seconds = 1e-3;
  stats.accepted = 3;
  for (int i = 0; i < 10; ++i) first.observe(tree, stats);  // all on the current arm, chain:2
  const AutoProfile kept = first.profile();
  ASSERT_EQ(kept.arms.size(), 1u) << "only measured arms are kept";
  EXPECT_EQ(kept.arms[0].first, "chain:2");

  std::vector<AutoArm> later;
  later.push_back(chain(8, "chain:8"));
  later.push_back(chain(4, "chain:4"));
  later.push_back(chain(2, "chain:2"));
  AutoTreeBuilder second(std::move(later));
  second.start_from(kept);
  EXPECT_EQ(second.selector().best(), 2) << "chain:2's evidence went to chain:2, wherever it is";
  EXPECT_NEAR(second.selector().rate(2), first.selector().rate(0), 1e-9 * first.selector().rate(0));
  EXPECT_EQ(second.selector().lasting_evidence(0).weight, 0) << "chain:8 was never measured";
}

}  // namespace
}  // namespace sf
