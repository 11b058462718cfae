// Training from a frozen target's hidden states (the adapter / early-exit predictor case):
// an exit head = RMSNorm + linear LM head applied to the hidden state after target layer
// `layer`, trained to match the target's final top-K distribution. Initialised from the
// target's own final norm and LM head, so step 0 is "the target's first layers as a draft"
// and training measures what a learned exit adds (LEVER 4.3's linear predictor; CATS
// adapters add an attention layer from the same ops).
// Not thread-safe; uses the ThreadPool given. Deterministic in the seed.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"
#include "train/trainer.h"

namespace sf::train {

// Hidden states after layers [0, layer) of a fully resident model for every window of
// seq_len tokens (each window its own sequence from position 0): [n_windows*seq_len, n_embd].
std::vector<float> target_hidden_states(const Model& model, const std::vector<int32_t>& windows, int seq_len, int layer,
                                        ThreadPool& pool);

struct ExitHead {
  int n_embd = 0, n_vocab = 0;
  float rms_eps = 1e-5f;
  std::vector<float> params;  // [n_embd] norm weight, then [n_vocab, n_embd] head
};

// Logits [n, n_vocab] of n rows of hidden states x [n, n_embd]; keeps the normalised
// rows xn and their rstd for a backward pass.
void exit_head_forward(const ExitHead& head, const float* x, int64_t n, std::vector<float>& xn,
                       std::vector<float>& rstd, std::vector<float>& logits, ThreadPool& pool);

// Gradient of the loss over the head's params (grad: [params.size()] floats, overwritten) from
// dlogits [n, n_vocab], given the forward pass's x, xn and rstd.
void exit_head_backward(const ExitHead& head, const float* x, const std::vector<float>& xn,
                        const std::vector<float>& rstd, const float* dlogits, int64_t n, float* grad, ThreadPool& pool);

// A head equal to the model's output_norm + LM head (dequantised to f32).
ExitHead exit_head_from_model(const Model& model);

// Trains the head on (hidden rows, teacher top-K of the same rows); batch_rows rows a step.
struct ExitHeadTrainOptions {
  int64_t steps = 200;
  int batch_rows = 256;
  float lr = 1e-3f;
  float weight_decay = 0.0f;
  float clip = 1.0f;
  DistillLoss loss = DistillLoss::kReducedKl;
  uint64_t seed = 1;
};
double train_exit_head(ExitHead& head, const std::vector<float>& hidden, const TeacherData& teacher,
                       const ExitHeadTrainOptions& options, ThreadPool& pool);

// Fraction of rows whose head argmax equals the teacher's top-1.
double exit_head_top1(const ExitHead& head, const std::vector<float>& hidden, const TeacherData& teacher,
                      ThreadPool& pool);

}  // namespace sf::train
