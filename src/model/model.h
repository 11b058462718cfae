// Model: a GGUF decoder (file index, hyper-parameters, weights). The weights may be fully
// resident (load) or partly resident with the rest streamed by the weights/ module
// (open + weights().load_units(plan)). After loading, a Model is not modified and is safe
// to share between threads; per-sequence state lives in KvCache and the Transformer.
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
  // Opens, validates and binds the tensors; loads embeddings and vectors only.
  static Result<std::unique_ptr<Model>> open(const std::string& path);
  // open() + every weight resident.
  static Result<std::unique_ptr<Model>> load(const std::string& path);

  const gguf::GgufFile& file() const { return *file_; }
  const ModelHParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return *weights_; }
  ModelWeights& mutable_weights() { return *weights_; }

 private:
  Model() = default;
  std::unique_ptr<gguf::GgufFile> file_;  // heap-held: the weights keep a pointer to it
  ModelHParams hparams_;
  std::unique_ptr<ModelWeights> weights_;
};

}  // namespace sf
