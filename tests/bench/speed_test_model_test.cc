// bench/speed_test.h on the real stories260K: each llama-bench-style test evaluates exactly
// the rows it names (a prompt in max_batch chunks, generation one row per pass), the depth
// context is computed once and every repetition starts again from it; and `specflash speed`
// end to end (table, JSON, usage errors before any model is loaded).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bench/speed_test.h"
#include "engine/session.h"
#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf::bench {
namespace {

std::string stories() { return test::shared_path("models/stories260K.gguf"); }

std::unique_ptr<Session> make(int n_ctx, int max_batch) {
  SessionOptions o;
  o.model_path = stories();
  o.n_ctx = n_ctx;
  o.n_threads = 2;
  o.max_batch = max_batch;
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(SpeedTests, LlamaBenchNamesAndOrder) {
  auto t = speed_tests({128, 0, 512}, {64}, {0, 2048});
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<std::string> names;
  for (const SpeedTest& x : *t) names.push_back(x.name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"pp128", "pp128 @ d2048", "pp512", "pp512 @ d2048", "tg64", "tg64 @ d2048"}));
  EXPECT_FALSE(speed_tests({0}, {0}, {0}).ok()) << "nothing to run";
  EXPECT_FALSE(speed_tests({16}, {4}, {-1}).ok());
  EXPECT_FALSE(speed_tests({-16}, {4}, {0}).ok());
}

TEST(SpeedResultStats, MedianMinMaxOfRates) {
  SpeedResult r;
  r.test = {0, 10, 0};
  r.seconds = {1.0, 0.5, 2.0, 0.25};  // 10, 20, 5, 40 t/s
  EXPECT_DOUBLE_EQ(r.median_tokens_per_second(), 15.0);
  EXPECT_DOUBLE_EQ(r.min_tokens_per_second(), 5.0);
  EXPECT_DOUBLE_EQ(r.max_tokens_per_second(), 40.0);
  r.seconds.pop_back();
  EXPECT_DOUBLE_EQ(r.median_tokens_per_second(), 10.0);
}

TEST(MeasureSpeed, PromptEvaluatesItsRowsInBatchChunksEveryRepetition) {
  auto s = make(64, 8);
  ASSERT_TRUE(s);
  const SessionCounters before = s->counters();
  auto r = measure_speed(*s, {20, 0, 0}, 3, 7);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->seconds.size(), 3u);
  for (double x : r->seconds) EXPECT_GT(x, 0);
  const SessionCounters after = s->counters();
  // Warm-up + 3 timed runs, each 20 rows in chunks of 8, 8, 4.
  EXPECT_EQ(after.rows_evaluated - before.rows_evaluated, 4u * 20);
  EXPECT_EQ(after.forward_passes - before.forward_passes, 4u * 3);
  EXPECT_EQ(s->n_past(), 20) << "each run starts from an empty cache";
  const int32_t bos = s->tokenizer().bos_id();
  ASSERT_GE(bos, 0);
  ASSERT_TRUE(s->tokenizer().default_add_bos());
  EXPECT_EQ(s->cached_tokens(0).front(), bos) << "a prompt from an empty context starts with BOS";
}

TEST(MeasureSpeed, GenerationAtDepthComputesTheContextOnceAndOneRowPerStep) {
  auto s = make(64, 16);
  ASSERT_TRUE(s);
  const SessionCounters before = s->counters();
  auto r = measure_speed(*s, {0, 5, 30}, 4, 7);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->seconds.size(), 4u);
  EXPECT_EQ(r->test.name(), "tg5 @ d30");
  const SessionCounters after = s->counters();
  // The 30-token context once (chunks of 16 and 14), then warm-up + 4 runs of 5 single rows.
  EXPECT_EQ(after.rows_evaluated - before.rows_evaluated, 30u + 5u * 5);
  EXPECT_EQ(after.forward_passes - before.forward_passes, 2u + 5u * 5);
  EXPECT_EQ(s->n_past(), 35) << "every repetition truncated back to the depth";
  EXPECT_EQ(s->cached_tokens(0).front(), s->tokenizer().bos_id());
}

TEST(MeasureSpeed, RejectsWhatCannotRun) {
  auto s = make(32, 8);
  ASSERT_TRUE(s);
  auto too_long = measure_speed(*s, {0, 8, 30}, 1, 1);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("needs 38 tokens of context; the session has 32"), std::string::npos)
      << too_long.status().message();
  EXPECT_FALSE(measure_speed(*s, {4, 0, 0}, 0, 1).ok()) << "zero repetitions";
  EXPECT_FALSE(measure_speed(*s, {4, 4, 0}, 1, 1).ok()) << "pp and tg at once";
  EXPECT_FALSE(measure_speed(*s, {0, 0, 0}, 1, 1).ok()) << "an empty test";
}

test::CommandResult run_speed(std::vector<std::string> args) {
  args.insert(args.begin(), "speed");
  return test::run_specflash(args, test::per_test_scratch_dir());
}

TEST(SpeedBinary, TableAndJson) {
  const std::string json_path = test::per_test_scratch_dir() + "/speed.json";
  const auto r =
      run_speed({"-m", stories(), "-t", "2", "-p", "64", "-n", "4", "-d", "0,8", "-r", "3", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* row : {"| pp64 |", "| pp64 @ d8 |", "| tg4 |", "| tg4 @ d8 |"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << " in\n" << r.out;
  EXPECT_NE(r.out.find("2 threads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| core idle |"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(json_path), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << "not JSON: " << json_path;
  EXPECT_EQ(j["repetitions"], 3);
  ASSERT_EQ(j["tests"].size(), 4u);
  for (const auto& t : j["tests"]) {
    ASSERT_EQ(t["seconds"].size(), 3u) << t;
    for (const auto& x : t["tokens_per_second"]) EXPECT_GT(x.get<double>(), 0) << t;
    // Two threads split a 64-token prompt's matmuls: parallel ops ran, and their waits are
    // counted. (A one-token step of stories260K, and a 16-token one, is too small to split:
    // its ops run inline.)
    if (t["test"].get<std::string>().rfind("pp", 0) == 0) {
      EXPECT_GT(t["parallel_ops"].get<uint64_t>(), 0u) << t;
    }
    EXPECT_GE(t["pool_wait_seconds"].get<double>(), 0.0) << t;
  }
  EXPECT_EQ(j["tests"][3]["test"], "tg4 @ d8");
  EXPECT_EQ(j["tests"][3]["n_depth"], 8);
}

TEST(SpeedBinary, UsageErrorsBeforeLoading) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-r", "0"}, {"-p", "-4"}, {"-p", "0", "-n", "0"}, {"-d", "x"}, {"--draft", "x.gguf"}}) {
    const auto r = run_speed(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace sf::bench
