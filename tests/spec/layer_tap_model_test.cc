// Layer taps: dropping rows at a layer inside the forward pass gives the kept rows exactly
// (bit for bit) the logits of a pass over the kept rows alone, resident and streamed, and
// the layers after the tap really run over fewer rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "engine/session.h"
#include "spec/tree_batch.h"
#include "test_paths.h"

namespace sf {
namespace {

std::unique_ptr<Session> open(const char* budget) {
  SessionOptions o;
  o.model_path = test::shared_path("models/stories260K.gguf");
  o.n_threads = 2;
  o.n_ctx = 128;
  o.mem_budget = *MemoryBudget::parse(budget);
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

// A bushy tree below a committed prompt: 3 children of the root, 2 below each, 1 below those.
TokenTree bushy_tree() {
  TokenTree t;
  int32_t tok = 40;
  for (int a = 0; a < 3; ++a) {
    const int32_t u = t.add(tok++, TokenTree::kRoot, 0.3f);
    for (int b = 0; b < 2; ++b) {
      const int32_t v = t.add(tok++, u, 0.3f);
      t.add(tok++, v, 0.3f);
    }
  }
  return t;
}

// Logits of every row of `batch` at the runner's current n_past, with rows dropped at
// `tap_layer` unless keep is empty (then no tap).
std::vector<std::vector<float>> logits_of(ModelRunner& runner, const ForwardBatch& batch, int tap_layer,
                                          const std::vector<int64_t>& keep, PassTiming* timing = nullptr) {
  LayerTap tap;
  tap.layer = tap_layer;
  tap.fn = [&](const float*, const std::vector<int64_t>&, std::vector<int64_t>* k) {
    *k = keep;
    return Status::Ok();
  };
  EXPECT_TRUE(runner.forward(batch, keep.empty() ? nullptr : &tap).ok());
  if (timing) *timing = runner.last_pass();
  std::vector<std::vector<float>> out(static_cast<size_t>(batch.size()));
  EXPECT_TRUE(runner.begin_head().ok());
  for (int64_t r = 0; r < batch.size(); ++r) {
    if (!runner.has_row(r)) continue;
    out[r].resize(runner.hparams().n_vocab);
    runner.row_logits(r, out[r].data());
  }
  runner.end_head();
  return out;
}

ForwardBatch only_rows(const ForwardBatch& b, const std::vector<int64_t>& rows) {
  ForwardBatch out;
  out.n_kv = b.n_kv;
  for (int64_t r : rows) {
    out.tokens.push_back(b.tokens[r]);
    out.positions.push_back(b.positions[r]);
    out.kv_cells.push_back(b.kv_cells[r]);
    out.mask.insert(out.mask.end(), b.mask.begin() + r * b.n_kv, b.mask.begin() + (r + 1) * b.n_kv);
  }
  return out;
}

class LayerTapTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LayerTapTest, DroppedRowsLeaveKeptRowsBitIdentical) {
  auto s = open(GetParam());
  ASSERT_TRUE(s);
  auto prompt = s->tokenize("Once upon a time, there was a little");
  ASSERT_TRUE(prompt.ok());
  ASSERT_TRUE(s->evaluate(*prompt, false, nullptr).ok());
  const TokenTree tree = bushy_tree();
  const ForwardBatch batch = make_tree_batch(tree, 30, s->n_past());
  // Keep the root and one branch (ancestors of kept rows are kept, as pruning requires).
  const std::vector<int64_t> keep = {0, 1, 2, 3, 4, 5};
  ModelRunner& runner = s->target();
  PassTiming timing;
  const auto tapped = logits_of(runner, batch, 2, keep, &timing);
  EXPECT_EQ(timing.rows, batch.size());
  EXPECT_EQ(timing.rows_after_tap, 6) << "the layers after the tap ran over the kept rows only";
  for (int64_t r = 0; r < batch.size(); ++r)
    EXPECT_EQ(runner.has_row(r), std::find(keep.begin(), keep.end(), r) != keep.end()) << r;
  const auto alone = logits_of(runner, only_rows(batch, keep), 0, {});
  for (size_t i = 0; i < keep.size(); ++i) {
    ASSERT_EQ(tapped[keep[i]].size(), alone[i].size());
    EXPECT_EQ(std::memcmp(tapped[keep[i]].data(), alone[i].data(), alone[i].size() * sizeof(float)), 0)
        << "row " << keep[i] << " differs from the pass over the kept rows alone";
  }
  // A tap that keeps everything changes nothing either.
  const auto full = logits_of(runner, batch, 0, {});
  ASSERT_EQ(batch.size(), 16);
  const auto all = logits_of(runner, batch, 3, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  for (int64_t r = 0; r < batch.size(); ++r)
    EXPECT_EQ(std::memcmp(full[r].data(), all[r].data(), full[r].size() * sizeof(float)), 0) << r;
}

INSTANTIATE_TEST_SUITE_P(Budgets, LayerTapTest, ::testing::Values("100%", "0%"),
                         [](const auto& info) { return std::string(info.param[0] == '1' ? "resident" : "streamed"); });

}  // namespace
}  // namespace sf
