// Training CATS adapters (spec/cats_adapter.h) on a frozen target: the hidden states after
// the adapter's layer are the input, the target's top-K final logits the teacher, the loss
// the Reduced KL of CATS appendix B (top-K renormalised). The target's final norm and LM
// head stay frozen (the adapter feeds them); only the adapter's parameters train.
// Deterministic in the seed (thread-count invariant ops). Not thread-safe; uses the
// ThreadPool given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "spec/cats_adapter.h"
#include "train/exit_head.h"
#include "train/train_loop.h"
#include "train/trainer.h"

namespace sf::train {

struct AdapterTrainOptions {
  int64_t steps = 300;
  int batch_windows = 8;  // windows per step (each seq_len rows)
  float lr = 3e-3f;
  float clip = 1.0f;
  DistillLoss loss = DistillLoss::kReducedKl;
  uint64_t seed = 1;
  bool progress = false;  // a line on stderr every 2 s (train/train_loop.h)
  // Checkpoints, as distill's (train/train_loop.h): written every checkpoint_every steps
  // and at the end; resume continues from the file when it exists, bit for bit.
  std::string checkpoint;  // "" = none
  int64_t checkpoint_every = 200;
  bool resume = false;
  int64_t stop_after = 0;       // stop (checkpointed) after this step, as if interrupted (tests)
  CheckpointIdentity identity;  // what a resumed checkpoint must match (run_train_adapter sets it)
};

struct AdapterTrainResult {
  double final_loss = 0;     // mean of the last 20 steps
  int64_t resumed_from = 0;  // 0: a fresh run
  int64_t last_step = 0;
};

// The adapter over whole windows (each from position 0): logits [n_win*seq_len, n_vocab]
// through the frozen head (`head` = the target's final norm + LM head, f32).
void adapter_logits(const AdapterLayout& layout, const std::vector<float>& params, const ExitHead& head,
                    const float* hidden, int64_t n_win, int seq_len, std::vector<float>& logits, ThreadPool& pool);

// Trains params in place (from the checkpoint when options.resume and it exists). Errors:
// the checkpoint's (train/train_loop.h).
Result<AdapterTrainResult> train_adapter(const AdapterLayout& layout, std::vector<float>& params, const ExitHead& head,
                                         const std::vector<float>& hidden, const TeacherData& teacher,
                                         const AdapterTrainOptions& options, ThreadPool& pool);

// Share of positions whose adapter argmax is the teacher's top-1.
double adapter_top1(const AdapterLayout& layout, const std::vector<float>& params, const ExitHead& head,
                    const std::vector<float>& hidden, const TeacherData& teacher, ThreadPool& pool);

// `specflash train-adapter`: target + text -> adapter file.
struct AdapterPipelineOptions {
  std::string target_path, out_path;
  std::vector<std::string> data;  // text files or directories (read_stories)
  AdapterRole role = AdapterRole::kDraft;
  int layer = -1;  // required: the hidden state after this many layers
  int seq_len = 64;
  int max_windows = 256;  // the last 10% are held out
  int top_k = 16;
  int n_threads = 0;
  AdapterTrainOptions train;
};

struct AdapterReport {
  int64_t train_rows = 0, heldout_rows = 0;
  int64_t parameters = 0;
  double loss = 0;
  double heldout_top1_before = 0, heldout_top1_after = 0;  // before = the plain exit head
  double seconds = 0;
  int64_t resumed_from = 0;  // the checkpoint's step (0: a fresh run)
  int64_t steps_done = 0;
};

Result<AdapterReport> run_train_adapter(const AdapterPipelineOptions& options);

}  // namespace sf::train
