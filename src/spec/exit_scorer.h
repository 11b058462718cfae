// ExitScorer: scores candidate tokens below a tree row from its hidden state at the
// early-exit layer, s(u, a) (LEVER 4.3, eq. 7). Two kinds:
//  - LogitLensScorer: the target's own final RMSNorm and LM-head rows of the candidate
//    tokens (needs no training; the head must be resident, which the session's residency
//    plan guarantees when pruning is on).
//  - LinearPredictorScorer: a trained predictor (RMSNorm weights + W [n_vocab, n_embd],
//    `specflash train-predictor`), loaded from a GGUF written for this target (its
//    fingerprint is checked: a predictor for another model is an error).
// Thread-compatible: score() is const and keeps its scratch per call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/model.h"

namespace sf {

class ExitScorer {
 public:
  virtual ~ExitScorer() = default;
  virtual const char* name() const = 0;
  // hidden: [n_embd] f32 at the exit layer; out[i] = s(u, tokens[i]).
  virtual void score(const float* hidden, const std::vector<int32_t>& tokens, float* out) const = 0;
  // Memory it keeps besides the target's weights (counted in the budget).
  virtual uint64_t resident_bytes() const { return 0; }
};

class LogitLensScorer : public ExitScorer {
 public:
  explicit LogitLensScorer(const Model& target) : model_(target) {}
  const char* name() const override { return "logit-lens"; }
  void score(const float* hidden, const std::vector<int32_t>& tokens, float* out) const override;

 private:
  const Model& model_;
};

// What identifies a target for its predictor: shape and a checksum of its embeddings.
std::string model_fingerprint(const Model& model);

class LinearPredictorScorer : public ExitScorer {
 public:
  // Loads `path`; errors name the file and what does not match `target` / `exit_layer`.
  static Result<std::unique_ptr<LinearPredictorScorer>> load(const std::string& path, const Model& target,
                                                             int exit_layer);
  const char* name() const override { return "predictor"; }
  void score(const float* hidden, const std::vector<int32_t>& tokens, float* out) const override;
  uint64_t resident_bytes() const override { return (norm_.size() + weight_.size()) * sizeof(float); }

  // Writes a predictor file for `target` at `exit_layer`. norm: [n_embd]; weight: [n_vocab, n_embd].
  static Status save(const std::string& path, const Model& target, int exit_layer, const std::vector<float>& norm,
                     const std::vector<float>& weight);

 private:
  int n_embd_ = 0;
  float eps_ = 1e-5f;
  std::vector<float> norm_, weight_;
};

}  // namespace sf
