// Model: a loaded GGUF decoder (file index, hyper-parameters, weights). Immutable after
// load and safe to share between threads; per-sequence state lives in KvCache and the
// Transformer's scratch.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "model/model_weights.h"

namespace sf {

class Model {
 public:
  // Opens, validates and loads every weight into memory.
  static Result<std::unique_ptr<Model>> load(const std::string& path);

  const gguf::GgufFile& file() const { return file_; }
  const ModelHParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return *weights_; }

 private:
  Model(gguf::GgufFile file, ModelHParams hp, std::unique_ptr<ModelWeights> w)
      : file_(std::move(file)), hparams_(hp), weights_(std::move(w)) {}
  gguf::GgufFile file_;
  ModelHParams hparams_;
  std::unique_ptr<ModelWeights> weights_;
};

}  // namespace sf
