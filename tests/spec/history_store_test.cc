// The persistent history store: round trip, bound, file mode, vocabulary fingerprint,
// corrupt files refused with a clear error, and a kill in the middle of save() leaving a
// readable store (the old or the new one, never a broken one).
#include "spec/history_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "test_paths.h"

namespace sf {
namespace {

constexpr uint64_t kFingerprint = 0x1234abcdull;
constexpr int kVocab = 1000;

HistoryOptions options(const std::string& dir, uint64_t max_tokens = 1000) {
  HistoryOptions o;
  o.dir = dir;
  o.task = "summaries";
  o.max_tokens = max_tokens;
  return o;
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = test::scratch_dir("history_" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(HistoryStore, RoundTripsAndBoundsItsSize) {
  const std::string dir = fresh_dir("roundtrip");
  {
    auto s = HistoryStore::open(options(dir, 10), kFingerprint, kVocab);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_TRUE(s->documents().empty());
    s->add({1, 2, 3, 4});
    s->add({5, 6, 7, 8});
    s->add({9, 10, 11});  // 11 tokens: the oldest document goes
    EXPECT_EQ(s->tokens(), 7u);
    ASSERT_TRUE(s->save().ok());
  }
  auto s = HistoryStore::open(options(dir, 10), kFingerprint, kVocab);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->documents().size(), 2u);
  EXPECT_EQ(s->documents()[0], (std::vector<int32_t>{5, 6, 7, 8}));
  EXPECT_EQ(s->documents()[1], (std::vector<int32_t>{9, 10, 11}));
  struct stat st {};
  ASSERT_EQ(::stat(s->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the store is private to its owner";
  ASSERT_TRUE(s->clear().ok());
  EXPECT_FALSE(std::filesystem::exists(s->path()));
}

TEST(HistoryStore, RefusesAnotherVocabularyAndBadNames) {
  const std::string dir = fresh_dir("vocab");
  auto s = HistoryStore::open(options(dir), kFingerprint, kVocab);
  ASSERT_TRUE(s.ok());
  s->add({1, 2, 3});
  ASSERT_TRUE(s->save().ok());
  auto other = HistoryStore::open(options(dir), kFingerprint + 1, kVocab);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("another tokenizer"), std::string::npos) << other.status().message();
  HistoryOptions bad = options(dir);
  bad.task = "../escape";
  EXPECT_FALSE(HistoryStore::open(bad, kFingerprint, kVocab).ok());
}

TEST(HistoryStore, RefusesACorruptFileWithAClearError) {
  const std::string dir = fresh_dir("corrupt");
  auto s = HistoryStore::open(options(dir), kFingerprint, kVocab);
  ASSERT_TRUE(s.ok());
  s->add({1, 2, 3, 4, 5});
  ASSERT_TRUE(s->save().ok());
  const std::string path = s->path();
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << b;
  };
  // A flipped bit, a truncation, garbage: each a clear error, never a crash.
  std::string flipped = bytes;
  flipped[30] ^= 0x10;
  write(flipped);
  auto r = HistoryStore::open(options(dir), kFingerprint, kVocab);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("corrupt"), std::string::npos) << r.status().message();
  write(bytes.substr(0, bytes.size() / 2));
  EXPECT_FALSE(HistoryStore::open(options(dir), kFingerprint, kVocab).ok());
  write("not a history store at all");
  r = HistoryStore::open(options(dir), kFingerprint, kVocab);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos) << "the error names the file";
}

TEST(HistoryStore, SurvivesAKillInTheMiddleOfSaving) {
  const std::string dir = fresh_dir("kill");
  {
    auto s = HistoryStore::open(options(dir, 1 << 22), kFingerprint, kVocab);
    ASSERT_TRUE(s.ok());
    s->add(std::vector<int32_t>(1000, 7));
    ASSERT_TRUE(s->save().ok());
  }
  std::mt19937 rng(5);
  int killed_while_saving = 0;
  for (int round = 0; round < 12; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Saves a large store over and over until killed.
      auto s = HistoryStore::open(options(dir, 1 << 22), kFingerprint, kVocab);
      if (!s.ok()) ::_exit(3);
      for (int i = 0;; ++i) {
        s->add(std::vector<int32_t>(200000, i % kVocab));
        if (!s->save().ok()) ::_exit(4);
      }
    }
    ::usleep(20000 + rng() % 80000);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) ++killed_while_saving;
    auto s = HistoryStore::open(options(dir, 1 << 22), kFingerprint, kVocab);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.status().message();
    EXPECT_FALSE(s->documents().empty());
  }
  EXPECT_EQ(killed_while_saving, 12) << "every child was killed mid-run, not finished";
  // Opening removed the killed writers' temporary files.
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string(), "summaries.sfhist");
}

}  // namespace
}  // namespace sf
