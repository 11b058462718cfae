// The optimisation loop every trainer here shares (distill, train-adapter,
// train-predictor): each step, the trainer's function computes the loss and gradient of the
// batch it derives from the step number; the loop clips the gradient to a global L2 norm,
// takes an AdamW step at the cosine schedule's learning rate, keeps the recent losses,
// prints a progress line, and writes checkpoints that a later run resumes bit for bit.
//
// Checkpoint file (little-endian; written to PATH.tmp, fsynced, renamed over PATH):
//   "SFTRCKP1", u32 identity length, identity text, i64 step, i64 n_params,
//   u32 n_recent, f64 recent losses, f32 params, f32 AdamW m, f32 AdamW v,
//   u64 FNV-1a of every byte before it.
// The identity is "key=value" lines naming what a run must share with the one that wrote
// the file (shapes, data, seed, batch, ...); a mismatch is refused naming the keys that
// differ. The batch order is not stored: every trainer derives its batches from (seed,
// step) (BatchSampler below, or distill's per-epoch permutation), so the step is the data
// position. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sf::train {

using CheckpointIdentity = std::vector<std::pair<std::string, std::string>>;

struct LoopOptions {
  int64_t steps = 0;
  float lr = 3e-3f;           // peak
  float min_lr_ratio = 0.1f;  // the cosine ends at lr * min_lr_ratio
  int64_t warmup = 0;
  float weight_decay = 0.0f;  // on the parameters decay_mask selects
  float clip = 1.0f;          // global L2 norm; 0 = off
  std::string checkpoint;     // "" = none
  int64_t checkpoint_every = 200;
  bool resume = false;          // continue from `checkpoint` when it exists
  int64_t stop_after = 0;       // stop (checkpointed) after this step, as if interrupted; 0: run to the end
  bool progress = false;        // a line on stderr every 2 s and at the last step
  std::string label = "train";  // the progress line's prefix
  int64_t tokens_per_step = 0;  // for tokens/s
  CheckpointIdentity identity;
};

// The schedule the small heads and adapters train with: a cosine from lr down to a tenth
// of it, after a warm-up over the first tenth of the steps, gradients clipped at `clip`.
LoopOptions head_loop_options(int64_t steps, float lr, float clip, std::string label);

struct LoopResult {
  double final_loss = 0;  // mean loss of the last 20 steps (kept across a resume)
  double last_loss = 0;   // the last step's loss
  double seconds = 0;
  double tokens_per_s = 0;
  int64_t resumed_from = 0;  // step the run resumed at (0 = fresh)
  int64_t last_step = 0;     // steps done in all (below steps when stopped by stop_after)
};

// Loss of step `step`'s batch at `params`; writes dL/dparams into grad (overwriting it).
using StepFn = std::function<double(int64_t step, const float* params, float* grad)>;

// Trains params in place from step 0, or from the checkpoint when options.resume and it
// exists. decay_mask: as AdamW::step. Errors: an unreadable, truncated or corrupt
// checkpoint, one from another run (naming what differs), one past options.steps, and a
// checkpoint that cannot be written.
Result<LoopResult> run_train_loop(std::vector<float>& params, const std::vector<uint8_t>& decay_mask,
                                  const LoopOptions& options, const StepFn& step_fn);

// Random batches: `per_step` indices uniform in [0, n) per step, drawn in order from one
// mt19937_64 seeded with `seed`. Asking for a later step skips the draws of the steps in
// between, so a resumed run sees the batches an uninterrupted one would.
class BatchSampler {
 public:
  BatchSampler(uint64_t seed, int64_t n, int64_t per_step);
  // The indices of `step` (steps asked in increasing order).
  const std::vector<int64_t>& batch(int64_t step);

 private:
  std::mt19937_64 rng_;
  int64_t n_, next_step_ = 0;
  std::vector<int64_t> batch_;
};

}  // namespace sf::train
