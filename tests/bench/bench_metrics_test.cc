// Aggregation and reports on a hand-made BenchResult: rates are ratios of totals, speedups
// are over flash-ar at the same budget, and the report says where and how it ran.
#include "bench/bench_metrics.h"

#include <gtest/gtest.h>

#include "bench/bench_report.h"

namespace sf::bench {
namespace {

PromptRun prompt_run(size_t prompt, int generated, double decode_seconds, uint64_t bytes, std::optional<bool> equal,
                     uint64_t cycles = 0, uint64_t accepted = 0) {
  PromptRun pr;
  pr.prompt = prompt;
  pr.tokens.assign(generated, 7);
  pr.stats.prompt_tokens = 10;
  pr.stats.generated_tokens = generated;
  pr.stats.decode_seconds = decode_seconds;
  pr.stats.prefill_seconds = 0.5;
  pr.stats.counters.stream.bytes_read = bytes;
  pr.stats.peak_rss_bytes = 1000 + bytes;
  pr.stats.spec.cycles = cycles;
  pr.stats.spec.accepted_draft_tokens = accepted;
  // Plain decoding's first token comes from the prefill; a speculative run's from a cycle.
  pr.stats.first_token_from_prefill = cycles == 0;
  pr.equal_to_ar = equal;
  return pr;
}

// ar, then flash-ar and chain at 50%, over two prompts in two categories.
BenchResult sample_result() {
  BenchResult r;
  r.prompts = {{{"d/0", "d", "x", "one"}, {1, 2}, 2}, {{"d/1", "d", "y", "two"}, {1, 3}, 2}};
  r.target_description = "llama, 5 layers, 1.0 MiB";
  const BenchBudget half{"50%", *MemoryBudget::parse("50%")};
  RunResult ar{BenchMethod::kAr, {"resident", {}}, {}, {}};
  ar.prompts = {prompt_run(0, 11, 1.0, 0, std::nullopt), prompt_run(1, 21, 1.0, 0, std::nullopt)};
  RunResult flash{BenchMethod::kFlashAr, half, {}, {}};
  flash.session.io_backend = "io_uring";
  flash.session.direct_io = true;
  // 10 + 20 decode tokens over 3 s: 10 tok/s.
  flash.prompts = {prompt_run(0, 11, 1.0, 1100, true), prompt_run(1, 21, 2.0, 2100, true)};
  RunResult chain{BenchMethod::kChain, half, {}, {}};
  // 30 decode tokens over 1 s (every token of a speculative run comes from a cycle): 30
  // tok/s, 3x; 10 cycles accepting 20 drafts: 3 per pass.
  chain.prompts = {prompt_run(0, 10, 0.5, 500, true, 4, 8), prompt_run(1, 20, 0.5, 700, false, 6, 12)};
  // As if it had drafted during the target's I/O (edgellm's and auto's provisional drafting).
  chain.prompts[0].stats.spec.provisional_cycles = 3;
  chain.prompts[0].stats.spec.provisional_tokens = 12;
  chain.prompts[0].stats.spec.provisional_kept = 5;
  chain.prompts[1].stats.spec.provisional_cycles = 1;
  chain.prompts[1].stats.spec.provisional_tokens = 4;
  r.runs = {ar, flash, chain};
  r.notes = {"d/1: prompt truncated"};
  return r;
}

TEST(BenchMetrics, OverallRows) {
  const auto rows = summarize_runs(sample_result());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].method, "ar");
  EXPECT_EQ(rows[0].budget, "resident");
  EXPECT_FALSE(rows[0].speedup.has_value());
  EXPECT_DOUBLE_EQ(rows[0].tokens_per_s(), 15.0);
  const SummaryRow& flash = rows[1];
  EXPECT_EQ(flash.prompts, 2);
  EXPECT_EQ(flash.generated_tokens, 32u);
  EXPECT_EQ(flash.decode_tokens, 30u);
  EXPECT_DOUBLE_EQ(flash.tokens_per_s(), 10.0) << "total tokens / total time, not a mean of rates";
  EXPECT_DOUBLE_EQ(*flash.speedup, 1.0);
  EXPECT_DOUBLE_EQ(flash.mean_accepted(), 1.0);
  EXPECT_DOUBLE_EQ(flash.bytes_per_token(), 3200.0 / 32);
  EXPECT_EQ(flash.peak_rss_bytes, 3100u);
  EXPECT_EQ(flash.equal_to_ar, 2);
  EXPECT_EQ(flash.compared_to_ar, 2);
  const SummaryRow& chain = rows[2];
  EXPECT_DOUBLE_EQ(chain.tokens_per_s(), 30.0);
  EXPECT_DOUBLE_EQ(*chain.speedup, 3.0);
  EXPECT_DOUBLE_EQ(chain.mean_accepted(), 3.0);
  EXPECT_EQ(chain.equal_to_ar, 1);
  EXPECT_EQ(chain.spec.provisional_cycles, 4u) << "summed over the prompts";
  EXPECT_EQ(chain.spec.provisional_tokens, 16u);
  EXPECT_EQ(chain.spec.provisional_kept, 5u);
}

TEST(BenchMetrics, CategoryRowsCompareWithinTheCategory) {
  const auto rows = summarize_categories(sample_result());
  ASSERT_EQ(rows.size(), 6u);  // 3 runs x 2 categories
  EXPECT_EQ(rows[2].method, "flash-ar");
  EXPECT_EQ(rows[2].category, "x");
  EXPECT_EQ(rows[2].prompts, 1);
  EXPECT_DOUBLE_EQ(rows[4].tokens_per_s(), 20.0);  // chain, x: 10 tokens in 0.5 s
  EXPECT_DOUBLE_EQ(*rows[4].speedup, 2.0);         // over flash-ar, x: 10 tok/s
  EXPECT_DOUBLE_EQ(*rows[5].speedup, 4.0);         // chain, y: 40 over 10 tok/s
}

TEST(BenchReport, MarkdownHeaderAndTable) {
  const BenchResult r = sample_result();
  BenchConfig config;
  config.per_category = true;
  ReportContext ctx;
  ctx.command_line = "specflash bench --methods ar,flash-ar,chain";
  ctx.model_path = "target.gguf";
  ctx.draft_model_path = "draft.gguf";
  ctx.io_bandwidth = 2e9;
  ctx.prompt_source = "d:2";
  ctx.machine.cpu_model = "Test CPU";
  ctx.machine.cores = 2;
  ctx.machine.simd = "AVX2";
  ctx.commit = "abc1234";
  ctx.date = "2025-01-01 00:00:00 UTC";
  const std::string md = markdown_report(ctx, config, r, summarize_runs(r), summarize_categories(r));
  for (const char* expected :
       {"Test CPU (2 cores", "SIMD AVX2)", "commit: abc1234", "target: target.gguf (llama, 5 layers",
        "draft: draft.gguf", "`specflash bench --methods ar,flash-ar,chain`",
        "EMULATED at 2.00 GB/s (io_uring, O_DIRECT)", "2025-01-01", "| ar | resident | 2 | 15.00 | - | 1.00 |",
        "| chain | 50% | 2 | 30.00 | 3.00x | 3.00 |", "| 1/2 |", "| d | y | chain | 50% | 1 | 40.00 | 4.00x |",
        "note: d/1: prompt truncated"})
    EXPECT_NE(md.find(expected), std::string::npos) << "missing: " << expected << "\n" << md;
}

TEST(BenchReport, JsonHasRowsAndPerPromptRows) {
  const BenchResult r = sample_result();
  const auto rows = summarize_runs(r);
  const auto j = json_report({}, BenchConfig{}, r, rows, summarize_categories(r));
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][2]["method"], "chain");
  EXPECT_DOUBLE_EQ(j["rows"][2]["speedup_vs_flash_ar"].get<double>(), 3.0);
  EXPECT_TRUE(j["rows"][0]["speedup_vs_flash_ar"].is_null());
  EXPECT_EQ(j["rows"][2]["spec"]["provisional_cycles"], 4);
  EXPECT_EQ(j["rows"][2]["spec"]["provisional_kept"], 5);
  EXPECT_EQ(j["rows"][1]["spec"]["provisional_tokens"], 0) << "a method that never lends says so";
  ASSERT_EQ(j["prompts"].size(), 6u);
  EXPECT_TRUE(j["prompts"][0]["equal_to_ar"].is_null()) << "ar is the reference";
  EXPECT_EQ(j["prompts"][5]["equal_to_ar"], false);
  EXPECT_EQ(j["prompts"][5]["id"], "d/1");
  EXPECT_EQ(j["prompts"][5]["tokens"].size(), 20u);
  EXPECT_EQ(j["prompt_set"][1]["text"], "two");
  EXPECT_EQ(j["categories"].size(), 6u);
}

TEST(BenchReport, QuoteCommandLine) {
  const char* args[] = {"bench", "--dataset", "spec_bench/qa:2", "--prompt-file", "my prompts.txt", "it's"};
  EXPECT_EQ(quote_command_line(6, const_cast<char**>(args)),
            "bench --dataset spec_bench/qa:2 --prompt-file 'my prompts.txt' 'it'\\''s'");
}

}  // namespace
}  // namespace sf::bench
