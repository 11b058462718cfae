// LEVER's early-exit predictor (4.3): a linear scorer over the target's hidden state at
// the exit layer (RMSNorm + W [n_vocab, n_embd], the ExitHead shape), initialised from the
// logit lens (the target's final norm and LM head) and trained on the frozen target with
//   L = tau_kd^2 KL(softmax(z/tau_kd) || softmax(Wh/tau_kd))                 (eq. 9)
//     + lambda * tau_c^2 KL(softmax_C(z/tau_c) || softmax_C(Wh/tau_c))        (eq. 10)
// where z are the target's final logits, known here as its top-K (the teacher signal:
// the first term uses the top-K renormalised, as the Reduced KL of the distiller) and C
// is the draft's candidate set at the position (the ranking problem pruning solves).
// Teacher logits of candidates outside the top-K are unknown; they are taken as the K-th
// logit (an upper bound), which only ever makes such a candidate look more plausible.
// Deterministic in the seed. Uses the ThreadPool given; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "train/exit_head.h"
#include "train/trainer.h"

namespace sf::train {

struct PredictorTrainOptions {
  int64_t steps = 800;
  int batch_rows = 256;
  float lr = 3e-3f;
  float clip = 1.0f;
  float tau_kd = 2.0f;       // distillation temperature (eq. 9)
  float tau_cand = 1.0f;     // candidate-set temperature (eq. 10)
  float lambda_cand = 1.0f;  // weight of the candidate-set term
  uint64_t seed = 1;
};

// candidates: [rows, kc] ids of the draft's top-kc at each row (descending).
double train_predictor(ExitHead& head, const std::vector<float>& hidden, const TeacherData& teacher,
                       const std::vector<int32_t>& candidates, int kc, const PredictorTrainOptions& options,
                       ThreadPool& pool);

// Share of rows whose predictor argmax within the candidate set equals the teacher's
// (rows whose teacher top-1 is a candidate only): the choice pruning relies on.
double candidate_agreement(const ExitHead& head, const std::vector<float>& hidden, const TeacherData& teacher,
                           const std::vector<int32_t>& candidates, int kc, ThreadPool& pool);

}  // namespace sf::train

namespace sf::train {

// `specflash train-predictor`: the pipeline from a target (and optionally its draft) to a
// predictor file LEVER's pruning loads (--lever-predictor).
struct PredictorPipelineOptions {
  std::string target_path, draft_path, out_path;  // draft empty: candidates = teacher top-kc
  std::vector<std::string> data;                  // text files or directories (read_stories)
  int layer = -1;                                 // -1: half the target's layers
  int seq_len = 64;
  int max_windows = 256;  // windows of training text (the last 10% are held out)
  int top_k = 16;         // teacher logits kept per position
  int candidates = 8;     // candidate-set size (the tree builders' C(u))
  int n_threads = 0;
  bool progress = false;
  PredictorTrainOptions train;
};

struct PredictorReport {
  int layer = 0;
  int64_t train_rows = 0, heldout_rows = 0;
  double loss = 0;
  double heldout_agreement_before = 0, heldout_agreement_after = 0;  // candidate_agreement
  double heldout_top1_before = 0, heldout_top1_after = 0;            // full-vocabulary top-1
};

Result<PredictorReport> run_train_predictor(const PredictorPipelineOptions& options);

}  // namespace sf::train
