// `specflash bench` end to end with the real stories260K model: the JSON report's rows,
// flash-ar's tokens equal to ar's, bytes streamed at 50%; and the binary's usage errors
// (one "error:" line, exit code 2) before any model is loaded.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "bench/bench_runner.h"
#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf::bench {
namespace {

using RunOutput = sf::test::CommandResult;
using sf::test::read_file;

std::string stories() { return sf::test::shared_path("models/stories260K.gguf"); }
std::string datasets() { return sf::test::shared_path("datasets"); }

RunOutput run_bench_binary(std::vector<std::string> args) {
  args.insert(args.begin(), "bench");
  return sf::test::run_specflash(args, sf::test::per_test_scratch_dir());
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& substring) {
  const RunOutput r = run_bench_binary(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(substring), std::string::npos) << r.err << "expected: " << substring;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(BenchBinary, EndToEndJson) {
  const std::string json_path = sf::test::per_test_scratch_dir() + "/bench.json";
  const RunOutput r =
      run_bench_binary({"-m", stories(), "--methods", "ar,flash-ar", "--budgets", "50%", "--dataset", "tinystories:3",
                        "--n-predict", "16", "--json", json_path, "--data-dir", datasets()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| flash-ar | 50% | 3 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| 3/3 |"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("prompt 3/3"), std::string::npos) << "progress on stderr: " << r.err;

  const auto j = nlohmann::json::parse(read_file(json_path), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << "not JSON: " << json_path;
  ASSERT_EQ(j["rows"].size(), 2u);
  const auto& ar = j["rows"][0];
  const auto& flash = j["rows"][1];
  EXPECT_EQ(ar["method"], "ar");
  EXPECT_EQ(flash["method"], "flash-ar");
  EXPECT_EQ(flash["budget"], "50%");
  EXPECT_EQ(flash["prompts"], 3);
  EXPECT_EQ(flash["equal_to_ar"], 3);
  EXPECT_EQ(flash["compared_to_ar"], 3);
  EXPECT_GT(flash["bytes_read"].get<uint64_t>(), 0u) << "50% streams half the layers";
  EXPECT_EQ(ar["bytes_read"].get<uint64_t>(), 0u);
  EXPECT_GT(flash["decode_tokens_per_s"].get<double>(), 0);
  EXPECT_EQ(j["meta"]["model"]["path"], stories());
  ASSERT_EQ(j["prompts"].size(), 6u);
  for (const auto& p : j["prompts"]) {
    EXPECT_GT(p["generated_tokens"].get<int>(), 0);
    if (p["method"] == "flash-ar") {
      EXPECT_EQ(p["equal_to_ar"], true) << p["id"];
    }
  }
}

// stories260K drafting for itself: every draft is accepted, so the speculative rows must
// show mean accepted > 1 and still equal ar token for token.
TEST(BenchBinary, SpeculativeMethodsEqualAr) {
  const std::string json_path = sf::test::per_test_scratch_dir() + "/bench.json";
  const RunOutput r = run_bench_binary(
      {"-m",          stories(), "--draft",       stories(), "--methods", "flash-ar,chain,tree", "--budgets",   "0%",
       "--draft-len", "3",       "--tree-widths", "2,1",     "--dataset", "tinystories:2",       "--n-predict", "12",
       "--json",      json_path, "--data-dir",    datasets()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(json_path), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j["rows"].size(), 4u) << "ar is added to compare with";
  EXPECT_EQ(j["meta"]["draft_model"], stories());
  for (int i = 2; i < 4; ++i) {
    const auto& row = j["rows"][i];
    EXPECT_EQ(row["equal_to_ar"], 2) << row["method"];
    EXPECT_GT(row["mean_accepted"].get<double>(), 1.0) << row["method"];
    EXPECT_GT(row["speedup_vs_flash_ar"].get<double>(), 0.0) << row["method"];
  }
}

// A history store in a bench run (cold, then warm) with no --spec: the bench's shared
// options must not take the run/chat default (auto) and refuse --history-dir for it.
TEST(BenchBinary, HistoryStoreRunsColdThenWarm) {
  const std::string dir = sf::test::per_test_scratch_dir() + "/history";
  const std::vector<std::string> args = {"-m",
                                         stories(),
                                         "--methods",
                                         "flash-ar,coordgen",
                                         "--budgets",
                                         "100%",
                                         "--dataset",
                                         "tinystories:2",
                                         "--n-predict",
                                         "8",
                                         "--history-dir",
                                         dir,
                                         "--history-task",
                                         "t",
                                         "--data-dir",
                                         datasets()};
  std::vector<std::string> cold = args;
  cold.push_back("--history-clear");
  const RunOutput first = run_bench_binary(cold);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("| coordgen | 100% | 2 |"), std::string::npos) << first.out;
  std::ifstream store(dir + "/t.sfhist", std::ios::binary);
  EXPECT_TRUE(store.good()) << "the cold run wrote its store";
  const RunOutput second = run_bench_binary(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("| coordgen | 100% | 2 |"), std::string::npos) << second.out;
}

// Emulated storage faster than any disk (1 TB/s) cannot be emulated: the bench warns, the
// report carries the note and every streamed row the rate the storage itself delivered. A
// rate far below any disk (10 MB/s) is emulated and nothing is said.
TEST(BenchBinary, EmulationFasterThanTheStorageIsReported) {
  const auto bench_at = [](const std::string& rate, const std::string& json_path) {
    return run_bench_binary({"-m", stories(), "--methods", "flash-ar", "--budgets", "50%", "--dataset", "tinystories:1",
                             "--n-predict", "8", "--io-bandwidth", rate, "--json", json_path, "--data-dir",
                             datasets()});
  };
  const std::string fast_json = sf::test::per_test_scratch_dir() + "/fast.json";
  const RunOutput fast = bench_at("1000G", fast_json);
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_NE(fast.err.find("warning: storage EMULATED at 1000.00 GB/s, but this machine's own storage delivered"),
            std::string::npos)
      << fast.err;
  EXPECT_NE(fast.out.find("note: storage EMULATED at 1000.00 GB/s"), std::string::npos) << fast.out;
  EXPECT_NE(fast.out.find("there the rates are this storage's own"), std::string::npos) << fast.out;
  const auto j = nlohmann::json::parse(read_file(fast_json), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object());
  const double device = j["meta"]["storage_device_bytes_per_s"].get<double>();
  EXPECT_GT(device, 0);
  EXPECT_LT(device, 1000e9);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["device_bytes_per_s"].get<double>(), 0) << "ar reads nothing";
  EXPECT_GT(j["rows"][1]["device_bytes_per_s"].get<double>(), 0) << "flash-ar streams half the layers";

  const std::string slow_json = sf::test::per_test_scratch_dir() + "/slow.json";
  const RunOutput slow = bench_at("10M", slow_json);
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_EQ(slow.err.find("own storage delivered"), std::string::npos) << slow.err;
  EXPECT_EQ(slow.out.find("own storage delivered"), std::string::npos) << slow.out;
  EXPECT_NE(slow.out.find("rates are not those of this machine's disk"), std::string::npos) << slow.out;
}

TEST(BenchBinary, UsageErrors) {
  expect_usage_error({"--methods", "ar,beam"}, "unknown method 'beam'");
  expect_usage_error({"--methods", "chain"}, "chain needs a draft model");
  expect_usage_error({"--budgets", "50%,200%"}, "budget '200%'");
  expect_usage_error({"--dataset", "squad:3"}, "unknown dataset 'squad'");
  expect_usage_error({"--dataset", "spec_bench/poetry:3", "--data-dir", datasets()}, "no category 'poetry'");
  expect_usage_error({"--budgets", "50%", "--mem-budget", "25%"}, "not both");
  expect_usage_error({"--tree-widths", "3,0"}, "tree widths");
  expect_usage_error({"--spec", "chain", "--draft", stories()}, "not --spec");
}

TEST(BenchBinary, MissingDatasetFolderIsARuntimeError) {
  const RunOutput r = run_bench_binary({"--data-dir", sf::test::per_test_scratch_dir(), "--dataset", "gsm8k:2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("gsm8k/test.jsonl"), std::string::npos) << r.err;
}

// The library path without the binary: a prompt too long for the context is cut from
// the left and still produces the same tokens under streaming as resident.
TEST(BenchRunner, TruncatesLongPromptsAndComparesWithAr) {
  BenchConfig config;
  config.methods = {BenchMethod::kAr, BenchMethod::kFlashAr};
  config.budgets = *parse_budgets("0%");
  config.n_predict = 8;
  config.sampling.temperature = 0;
  SessionOptions base;
  base.model_path = stories();
  base.n_threads = 2;
  base.n_ctx = 64;
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "Once upon a time there was a cat. ";
  const std::vector<Prompt> prompts = {{"t/0", "t", "t", "Lily had a red ball."}, {"t/1", "t", "t", long_text}};
  std::vector<std::string> notes;
  BenchCallbacks callbacks;
  callbacks.note = [&](const std::string& n) { notes.push_back(n); };
  auto r = run_bench(config, plan_runs(config, base), prompts, callbacks);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->prompts.size(), 2u);
  EXPECT_FALSE(r->prompts[0].truncated());
  ASSERT_TRUE(r->prompts[1].truncated());
  EXPECT_LE(static_cast<int>(r->prompts[1].ids.size()), 64 - 8 - 1);
  EXPECT_EQ(r->prompts[1].ids.front(), r->prompts[0].ids.front()) << "BOS is kept";
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("t/1"), std::string::npos);
  ASSERT_EQ(r->runs.size(), 2u);
  for (const PromptRun& pr : r->runs[1].prompts) {
    ASSERT_TRUE(pr.equal_to_ar.has_value());
    EXPECT_TRUE(*pr.equal_to_ar);
    EXPECT_GT(pr.stats.counters.stream.bytes_read, 0u);
  }
}

}  // namespace
}  // namespace sf::bench
