// The distillation training loop: batches of token windows with the teacher's cached
// top-K logits, AdamW + cosine schedule + global-norm clipping, periodic checkpoints that
// resume bit for bit, a progress line on stderr, and top-1 agreement with the teacher.
//
// Deterministic: the same config, seed and data give the same weights (batch order is a
// function of (seed, epoch); every op is thread-count invariant). Not thread-safe; uses
// the ThreadPool given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "train/draft_model.h"
#include "train/train_ops.h"

namespace sf::train {

// Windows of seq_len tokens and the teacher's top-K at every position.
struct TeacherData {
  int seq_len = 0;
  int k = 0;
  std::vector<int32_t> tokens;  // [n_windows, seq_len]
  std::vector<int32_t> ids;     // [n_windows, seq_len, k] teacher top-K ids, descending
  std::vector<float> logits;    // [n_windows, seq_len, k]
  std::vector<float> lse;       // [n_windows, seq_len] logsumexp of the full distribution
  int64_t n_windows() const { return seq_len > 0 ? static_cast<int64_t>(tokens.size()) / seq_len : 0; }
  // Appends another window set (same seq_len and k).
  void append(const TeacherData& other);
};

struct TrainOptions {
  int64_t steps = 1000;
  int batch = 16;
  float lr = 3e-3f;
  float min_lr_ratio = 0.1f;
  int64_t warmup = 50;
  float weight_decay = 0.01f;
  float clip = 1.0f;
  DistillLoss loss = DistillLoss::kReducedKl;
  uint64_t seed = 1;
  std::string checkpoint;  // "" = none
  int64_t checkpoint_every = 200;
  bool resume = false;     // continue from `checkpoint` when it exists
  bool progress = true;    // progress line on stderr
  int64_t stop_after = 0;  // stop (checkpointed) after this step, as if interrupted; 0: run to the end
};

struct TrainResult {
  std::vector<float> params;
  double final_loss = 0;  // mean loss over the last 20 steps
  double seconds = 0;
  double tokens_per_s = 0;
  int64_t resumed_from = 0;  // step the run resumed at (0 = fresh)
};

// Trains from scratch (init_params(config, seed)) or from the checkpoint.
Result<TrainResult> train_draft(const DraftConfig& config, const TeacherData& data, const TrainOptions& options,
                                ThreadPool& pool);

// Fraction of positions where the draft's argmax equals the teacher's top-1, and the mean
// loss, over every window of data.
struct Agreement {
  double top1 = 0;
  double loss = 0;
  int64_t positions = 0;
};
Agreement evaluate_agreement(const DraftConfig& config, const std::vector<float>& params, const TeacherData& data,
                             DistillLoss loss, ThreadPool& pool);

}  // namespace sf::train
