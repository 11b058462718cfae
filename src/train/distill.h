// `specflash distill`: the whole pipeline from a target GGUF to a draft GGUF.
//   1. Check the target (it must carry a vocabulary) and the draft shape (no wider than
//      the target, a valid head split).
//   2. Training text: every file given (directories: their regular files, sorted), split
//      into stories at "<|endoftext|>", each tokenized with BOS; optionally plus stories
//      sampled from the target itself. The last `holdout_stories` stories are held out.
//   3. Teacher signal: the target's top-K logits (and full logsumexp) at every position of
//      every seq_len window, computed once with the engine's forward pass and kept.
//   4. train_draft (trainer.h), then held-out top-1 agreement, then the GGUF export.
// Failures a user can cause (bad paths, a target without a vocabulary, too little data,
// a draft wider than the target) are Status errors that say what to change.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/session.h"
#include "train/draft_model.h"
#include "train/trainer.h"

namespace sf::train {

struct DistillOptions {
  std::string target_path;
  std::string out_path;
  std::vector<std::string> data;  // files or directories
  DraftConfig draft;              // n_vocab is taken from the target
  int seq_len = 128;
  int top_k = 16;
  int holdout_stories = 0;       // 0: the last 5% of windows are held out instead
  int64_t sample_tokens = 0;     // tokens of text sampled from the target (temperature 1)
  int64_t max_train_tokens = 0;  // 0: all
  int n_threads = 0;
  bool f16 = false;
  TrainOptions train;
};

struct DistillReport {
  int64_t train_windows = 0, heldout_windows = 0;
  int64_t data_tokens = 0, sampled_tokens = 0;
  double teacher_seconds = 0;
  TrainResult train;
  Agreement heldout;
  Agreement train_eval;  // on up to 32 training windows
  int64_t n_params = 0;
};

Result<DistillReport> run_distill(const DistillOptions& options);

// The target's top-K logits (descending) and full logsumexp at every position of every
// seq_len window of `windows` (each window evaluated from position 0 after a reset).
// progress: a stderr line per second of work, "<command>: teacher pass (<what>): ...", so
// each trainer's lines carry its own command name.
Status compute_teacher_signal(Session& target, const std::vector<int32_t>& windows, int seq_len, int k,
                              TeacherData* out, bool progress = false, const char* what = "",
                              const char* command = "distill");

// Reads the stories of the given files/directories (see above), in order.
Result<std::vector<std::string>> read_stories(const std::vector<std::string>& paths);

}  // namespace sf::train
