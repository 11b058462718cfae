// LEVER's predictor: training on stories260K's layer-2 hidden states raises the held-out
// agreement with the target within the draft's candidate sets above the logit lens, the
// file it writes loads into a pruning session for this target only, and decoding with it
// stays lossless while rows are pruned.
#include <gtest/gtest.h>

#include "engine/session.h"
#include "test_paths.h"
#include "train/exit_predictor.h"

namespace sf::train {
namespace {

TEST(ExitPredictor, TrainsLoadsAndPrunesLosslessly) {
  PredictorPipelineOptions o;
  o.target_path = test::shared_path("models/stories260K.gguf");
  o.draft_path = test::source_path("models/stories260K-draft.gguf");
  o.data = {test::shared_path("datasets/tinystories/tinystories_sample.txt")};
  o.out_path = test::scratch_dir("exit_predictor") + "/p.gguf";
  o.layer = 2;
  o.max_windows = 48;
  o.train.steps = 200;
  o.n_threads = 2;
  auto r = run_train_predictor(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::printf("candidate agreement %.3f -> %.3f, top-1 %.3f -> %.3f\n", r->heldout_agreement_before,
              r->heldout_agreement_after, r->heldout_top1_before, r->heldout_top1_after);
  EXPECT_GT(r->heldout_agreement_after, r->heldout_agreement_before + 0.05);

  SessionOptions so;
  so.model_path = o.target_path;
  so.n_threads = 2;
  so.n_ctx = 256;
  so.mem_budget = *MemoryBudget::parse("0%");
  so.io_bandwidth = 100e6;  // EMULATED: large trees (see speculative_model_test)
  so.spec.method = SpecConfig::Method::kLever;
  so.spec.draft_model_path = o.draft_path;
  so.spec.max_tree_nodes = 24;
  so.spec.prune.enabled = true;
  so.spec.prune.exit_layer = 2;
  so.spec.prune.theta = 0.3f;
  so.spec.prune.predictor_path = o.out_path;
  auto spec = Session::create(so);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_STREQ((*spec)->tree_pruner()->scorer().name(), "predictor");
  SessionOptions po;
  po.model_path = o.target_path;
  po.n_threads = 2;
  auto plain = Session::create(po);
  ASSERT_TRUE(plain.ok());
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t pruned = 0, accepted = 0;
  for (const char* prompt : {"Once upon a time", "The little dog was sad because", "Tom and Sue went to the park."}) {
    const auto ids = *(*plain)->tokenize(prompt);
    std::vector<int32_t> want, got;
    auto collect = [](std::vector<int32_t>* v) {
      return [v](int32_t id, const std::string&) {
        if (id >= 0) v->push_back(id);
        return true;
      };
    };
    ASSERT_TRUE((*plain)->generate(ids, 40, greedy, true, collect(&want)).ok());
    auto st = (*spec)->generate(ids, 40, greedy, true, collect(&got));
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(want, got) << prompt;
    pruned += st->spec.rows_pruned;
    accepted += st->spec.accepted_draft_tokens;
  }
  EXPECT_GT(pruned, 0u);
  EXPECT_GT(accepted, 0u);
}

}  // namespace
}  // namespace sf::train
