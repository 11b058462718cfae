// Training from a frozen target's hidden states: an exit head after stories260K's layer 2,
// initialised from the target's own final norm + LM head, learns to agree with the full
// target much better than the untrained head (the "first layers as a draft" baseline).
#include <gtest/gtest.h>

#include <cstdio>

#include "engine/session.h"
#include "model/model.h"
#include "test_paths.h"
#include "train/distill.h"
#include "train/exit_head.h"

namespace sf::train {
namespace {

TEST(ExitHead, LearnsFromLayerTwoHiddenStates) {
  const std::string target = test::shared_path("models/stories260K.gguf");
  SessionOptions so;
  so.model_path = target;
  so.n_threads = 2;
  auto session = Session::create(so);
  ASSERT_TRUE(session.ok()) << session.status().message();
  auto stories = read_stories({test::shared_path("datasets/tinystories/tinystories_sample.txt")});
  ASSERT_TRUE(stories.ok());
  std::vector<int32_t> stream;
  for (const auto& s : *stories) {
    auto ids = (*session)->tokenize(s);
    ASSERT_TRUE(ids.ok());
    stream.insert(stream.end(), ids->begin(), ids->end());
  }
  const int L = 32;
  const int64_t n_win = static_cast<int64_t>(stream.size()) / L, n_train = n_win * 3 / 4;
  ASSERT_GE(n_win - n_train, 2);
  std::vector<int32_t> train_win(stream.begin(), stream.begin() + n_train * L);
  std::vector<int32_t> eval_win(stream.begin() + n_train * L, stream.begin() + n_win * L);
  TeacherData t_train, t_eval;
  ASSERT_TRUE(compute_teacher_signal(**session, train_win, L, 16, &t_train).ok());
  ASSERT_TRUE(compute_teacher_signal(**session, eval_win, L, 16, &t_eval).ok());

  auto model = Model::load(target);
  ASSERT_TRUE(model.ok());
  ThreadPool& pool = (*session)->pool();
  const std::vector<float> h_train = target_hidden_states(**model, train_win, L, 2, pool);
  const std::vector<float> h_eval = target_hidden_states(**model, eval_win, L, 2, pool);
  // Sanity: the head of the full stack agrees with the teacher exactly.
  ExitHead full = exit_head_from_model(**model);
  EXPECT_GT(exit_head_top1(full, target_hidden_states(**model, eval_win, L, 5, pool), t_eval, pool), 0.99);

  ExitHead head = exit_head_from_model(**model);
  const double before = exit_head_top1(head, h_eval, t_eval, pool);
  ExitHeadTrainOptions o;
  o.steps = 150;
  o.lr = 3e-3f;
  train_exit_head(head, h_train, t_train, o, pool);
  const double after_train = exit_head_top1(head, h_train, t_train, pool);
  const double after = exit_head_top1(head, h_eval, t_eval, pool);
  std::printf("layer-2 exit head top-1: untrained %.3f, trained %.3f held-out (%.3f train)\n", before, after,
              after_train);
  EXPECT_GT(after, before + 0.1);
}

}  // namespace
}  // namespace sf::train
