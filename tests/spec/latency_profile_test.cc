// LatencyProfile's cells under heavy-tailed pass times (a streamed pass here: ~1 ms in most
// cycles, 10-20 ms now and then, whatever the policy): one outlier moves a cell by a
// bounded step, while a lasting change of cost still shows within a few passes.
#include "spec/latency_profile.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

TEST(LatencyProfile, OneOutlierPassMovesACellByABoundedStep) {
  LatencyProfile p;
  for (int i = 0; i < 10; ++i) p.observe_verify(8, 100, 1e-3);
  ASSERT_DOUBLE_EQ(p.verify_seconds(8, 100), 1e-3);
  p.observe_verify(8, 100, 20e-3);  // an I/O hiccup
  EXPECT_LE(p.verify_seconds(8, 100), 1.2e-3 + 1e-12) << "at most the EMA's weight times twice the cell";
  EXPECT_GT(p.verify_seconds(8, 100), 1e-3) << "but it does count";
}

TEST(LatencyProfile, ALastingRiseStillShowsWithinAFewPasses) {
  LatencyProfile p;
  for (int i = 0; i < 10; ++i) p.observe_verify(8, 100, 1e-3);
  for (int i = 0; i < 15; ++i) p.observe_verify(8, 100, 3e-3);  // the machine got slower
  EXPECT_NEAR(p.verify_seconds(8, 100), 3e-3, 0.3e-3);
}

// A context with no measured pass of its own reads the nearest bucket that has one
// (preferring longer contexts), its estimate inflated by the unseen penalty; a bucket with
// its own measurements reads them as they are. The same after a JSON round trip, and
// nothing after clear().
TEST(LatencyProfile, ContextsWithoutMeasurementsReadTheNearestMeasuredBucket) {
  LatencyProfile p;
  EXPECT_FALSE(p.has_verify_data());
  EXPECT_EQ(p.verify_seconds(1, 100), 0.0);
  EXPECT_EQ(p.marginal_seconds(2, 100), 0.0);

  p.observe_verify(1, 1000, 1e-3);  // bucket 1 (512 to 2047 tokens)
  p.observe_verify(5, 1000, 3e-3);
  const double penalty = 1 + LatencyProfile::kUnseenPenalty;
  EXPECT_TRUE(p.has_verify_data());
  EXPECT_DOUBLE_EQ(p.verify_seconds(1, 1000), 1e-3);
  EXPECT_DOUBLE_EQ(p.verify_seconds(1, 100), 1e-3 * penalty) << "bucket 0 reads bucket 1, inflated";
  EXPECT_DOUBLE_EQ(p.verify_seconds(1, 5000), 1e-3 * penalty) << "bucket 2 reads bucket 1, inflated";
  EXPECT_DOUBLE_EQ(p.marginal_seconds(2, 100), 0.5e-3) << "the slope of bucket 1's cells";

  p.observe_verify(1, 100, 2e-3);  // bucket 0 now has its own (one cell: no slope of its own)
  EXPECT_DOUBLE_EQ(p.verify_seconds(1, 100), 2e-3);
  EXPECT_DOUBLE_EQ(p.marginal_seconds(2, 100), 0.0);

  auto loaded = LatencyProfile::from_json(p.to_json(), "test");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_DOUBLE_EQ(loaded->verify_seconds(1, 100), 2e-3);
  EXPECT_DOUBLE_EQ(loaded->verify_seconds(1, 5000), 1e-3 * penalty);
  EXPECT_DOUBLE_EQ(loaded->marginal_seconds(2, 1000), 0.5e-3);

  p.clear();
  EXPECT_FALSE(p.has_verify_data());
  EXPECT_EQ(p.verify_seconds(1, 1000), 0.0);
}

TEST(LatencyProfile, DraftPassOutliersAreBoundedToo) {
  LatencyProfile p;
  for (int i = 0; i < 10; ++i) p.observe_draft(1, 20e-6);
  p.observe_draft(1, 2e-3);  // descheduled mid-pass
  EXPECT_LE(p.draft_pass_seconds(), 24e-6 + 1e-12);
}

// A tree builder that drafts one node a pass (a shallow tree, a chain) only ever shows the
// profile single-row draft passes. The per-row cost then follows those passes; it used to
// keep the first one for good, which is the slow first draft of a prompt (the draft model
// catching up on it), and LEVER's expansion test then judged no node worth drafting below.
TEST(LatencyProfile, DraftRowCostFollowsSingleRowPassesUntilABatchShowsIt) {
  LatencyProfile p;
  p.observe_draft(1, 200e-6);  // the prompt's catch-up
  for (int i = 0; i < 40; ++i) p.observe_draft(1, 15e-6);
  EXPECT_NEAR(p.draft_pass_seconds(), 15e-6, 0.5e-6);
  EXPECT_NEAR(p.draft_row_seconds(), 15e-6, 0.5e-6);
  // Batched passes then give the per-row part: 15 us + 4 us a row.
  for (int i = 0; i < 40; ++i) p.observe_draft(8, 15e-6 + 8 * 4e-6);
  EXPECT_NEAR(p.draft_row_seconds(), 4e-6, 0.5e-6);
  for (int i = 0; i < 10; ++i) p.observe_draft(1, 15e-6);
  EXPECT_NEAR(p.draft_row_seconds(), 4e-6, 0.5e-6) << "single-row passes no longer move it";
}

}  // namespace
}  // namespace sf
