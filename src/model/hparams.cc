#include "model/hparams.h"

#include "model/architecture.h"
#include "model/stored_layout.h"

namespace sf {

const char* arch_display_name(Arch arch) { return architecture_traits(arch).name; }

Result<ModelHParams> read_hparams(const gguf::GgufFile& f) {
  ModelHParams hp;
  hp.arch_name = f.architecture();
  if (hp.arch_name.empty())
    return Status::Errorf("%s: no general.architecture in the metadata; not a model file?", f.path().c_str());
  const ArchitectureTraits* traits = find_architecture(hp.arch_name);
  if (traits == nullptr)
    return Status::Errorf("%s: unsupported architecture '%s' (supported: %s)", f.path().c_str(), hp.arch_name.c_str(),
                          supported_architecture_list().c_str());
  hp.arch = traits->arch;
  const std::string a = hp.arch_name + ".";

  auto required_int = [&](const std::string& key, int* out) -> Status {
    const gguf::Value* v = f.find(key);
    if (v == nullptr) return Status::Errorf("%s: missing metadata '%s'", f.path().c_str(), key.c_str());
    if (v->is_array())
      return Status::Errorf("%s: metadata '%s' varies per layer, which specflash does not support", f.path().c_str(),
                            key.c_str());
    if (!v->is_integer() || v->as_int() <= 0 || v->as_int() > (1 << 30))
      return Status::Errorf("%s: metadata '%s' must be a positive integer", f.path().c_str(), key.c_str());
    *out = static_cast<int>(v->as_int());
    return Status::Ok();
  };
  SF_RETURN_IF_ERROR(required_int(a + "embedding_length", &hp.n_embd));
  SF_RETURN_IF_ERROR(required_int(a + "block_count", &hp.n_layer));
  SF_RETURN_IF_ERROR(required_int(a + "feed_forward_length", &hp.n_ff));
  SF_RETURN_IF_ERROR(required_int(a + "attention.head_count", &hp.n_head));
  hp.n_head_kv = hp.n_head;
  if (f.has(a + "attention.head_count_kv"))
    SF_RETURN_IF_ERROR(required_int(a + "attention.head_count_kv", &hp.n_head_kv));
  hp.n_ctx_train = 2048;
  if (f.has(a + "context_length")) SF_RETURN_IF_ERROR(required_int(a + "context_length", &hp.n_ctx_train));
  hp.head_dim = hp.n_embd / hp.n_head;
  if (f.has(a + "attention.key_length")) SF_RETURN_IF_ERROR(required_int(a + "attention.key_length", &hp.head_dim));
  if (f.has(a + "attention.value_length")) {
    int vdim = 0;
    SF_RETURN_IF_ERROR(required_int(a + "attention.value_length", &vdim));
    if (vdim != hp.head_dim)
      return Status::Errorf("%s: key length %d != value length %d is not supported", f.path().c_str(), hp.head_dim,
                            vdim);
  }
  if (hp.n_head % hp.n_head_kv != 0)
    return Status::Errorf("%s: head_count %d is not a multiple of head_count_kv %d", f.path().c_str(), hp.n_head,
                          hp.n_head_kv);
  hp.rms_eps = static_cast<float>(f.get_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  hp.rope_freq_base = static_cast<float>(f.get_float(a + "rope.freq_base").value_or(10000.0));
  hp.n_rot = hp.head_dim;
  if (f.has(a + "rope.dimension_count")) SF_RETURN_IF_ERROR(required_int(a + "rope.dimension_count", &hp.n_rot));
  if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    return Status::Errorf("%s: rope.dimension_count %d is invalid for head size %d", f.path().c_str(), hp.n_rot,
                          hp.head_dim);
  hp.rope_mode = traits->rope_mode;

  const std::string scaling = f.get_string(a + "rope.scaling.type").value_or("none");
  const double factor =
      f.get_float(a + "rope.scaling.factor").value_or(f.get_float(a + "rope.scale_linear").value_or(0.0));
  if (scaling == "linear" || (scaling == "none" && f.has(a + "rope.scale_linear"))) {
    if (factor > 0) hp.rope_freq_scale = static_cast<float>(1.0 / factor);
  } else if (scaling != "none") {
    return Status::Errorf("%s: rope scaling '%s' is not supported (supported: none, linear, llama3 via rope_freqs)",
                          f.path().c_str(), scaling.c_str());
  }

  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (embd == nullptr || embd->dims.size() != 2)
    return Status::Errorf("%s: missing or malformed tensor 'token_embd.weight'", f.path().c_str());
  if (embd->dims[0] != hp.n_embd)
    return Status::Errorf("%s: token_embd.weight width %lld does not match embedding_length %d", f.path().c_str(),
                          static_cast<long long>(embd->dims[0]), hp.n_embd);
  hp.n_vocab = static_cast<int>(embd->dims[1]);
  hp.tied_output = find_stored_matrix(f, "output.weight").info == nullptr;
  return hp;
}

}  // namespace sf
