#include "model/model.h"

namespace sf {

Result<std::unique_ptr<Model>> Model::open(const std::string& path) {
  SF_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::open(path));
  std::unique_ptr<Model> m(new Model());
  m->file_ = std::make_unique<gguf::GgufFile>(std::move(file));
  SF_ASSIGN_OR_RETURN(m->hparams_, read_hparams(*m->file_));
  SF_ASSIGN_OR_RETURN(m->weights_, ModelWeights::bind(*m->file_, m->hparams_));
  return m;
}

Result<std::unique_ptr<Model>> Model::load(const std::string& path) {
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Model> m, open(path));
  SF_RETURN_IF_ERROR(m->weights_->load_units(std::vector<bool>(m->weights_->n_units(), true)));
  return m;
}

}  // namespace sf
