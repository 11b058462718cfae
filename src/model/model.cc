#include "model/model.h"

namespace sf {

Result<std::unique_ptr<Model>> Model::load(const std::string& path) {
  SF_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::open(path));
  SF_ASSIGN_OR_RETURN(ModelHParams hp, read_hparams(file));
  SF_ASSIGN_OR_RETURN(std::unique_ptr<ModelWeights> w, ModelWeights::load_resident(file, hp));
  return std::unique_ptr<Model>(new Model(std::move(file), hp, std::move(w)));
}

}  // namespace sf
