#include "model/model_weights.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "model/architecture.h"
#include "quant/dequantize.h"

namespace sf {
namespace {

std::string layer_name(int layer, const char* suffix) {
  return "blk." + std::to_string(layer) + "." + suffix;
}

// Looks up tensors and checks their shapes, so a malformed model fails at load with the
// tensor's name rather than producing garbage later.
class TensorBinder {
 public:
  TensorBinder(const gguf::GgufFile& f) : f_(f) {}

  Result<const gguf::TensorInfo*> find(const std::string& name, std::vector<int64_t> dims, bool optional = false) {
    const gguf::TensorInfo* t = f_.find_tensor(name);
    if (t == nullptr) {
      if (optional) return static_cast<const gguf::TensorInfo*>(nullptr);
      return Status::Errorf("%s: missing tensor '%s'", f_.path().c_str(), name.c_str());
    }
    std::vector<int64_t> got = t->dims;
    while (got.size() > dims.size() && got.back() == 1) got.pop_back();
    if (got != dims) {
      std::string want, have;
      for (auto d : dims) want += (want.empty() ? "" : "x") + std::to_string(d);
      for (auto d : t->dims) have += (have.empty() ? "" : "x") + std::to_string(d);
      return Status::Errorf("%s: tensor '%s' has shape %s, expected %s", f_.path().c_str(), name.c_str(),
                            have.c_str(), want.c_str());
    }
    return t;
  }

 private:
  const gguf::GgufFile& f_;
};

Status read_exact(int fd, uint8_t* dst, uint64_t n, uint64_t offset, const std::string& path) {
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, dst + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return Status::Errorf("%s: read failed at offset %llu: %s", path.c_str(),
                            static_cast<unsigned long long>(offset + done),
                            got < 0 ? std::strerror(errno) : "unexpected end of file");
    done += static_cast<uint64_t>(got);
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> layer_matrix_tensor_names(int layer) {
  std::vector<std::string> names;
  for (const char* s : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
                        "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"})
    names.push_back(layer_name(layer, s));
  return names;
}

Result<std::unique_ptr<ModelWeights>> ModelWeights::load_resident(const gguf::GgufFile& f,
                                                                  const ModelHParams& hp) {
  auto w = std::make_unique<ModelWeights>();
  const ArchitectureTraits& traits = architecture_traits(hp.arch);
  TensorBinder bind(f);

  struct MatrixSlot {
    const gguf::TensorInfo* info;
    WeightMatrix* dst;
  };
  struct VectorSlot {
    const gguf::TensorInfo* info;
    const float** dst;
  };
  std::vector<MatrixSlot> matrices;
  std::vector<VectorSlot> vectors;
  auto matrix = [&](const std::string& name, int64_t in, int64_t out, WeightMatrix* dst) -> Status {
    SF_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, bind.find(name, {in, out}));
    matrices.push_back({t, dst});
    return Status::Ok();
  };
  auto vector = [&](const std::string& name, int64_t n, const float** dst, bool optional = false) -> Status {
    SF_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, bind.find(name, {n}, optional));
    if (t) vectors.push_back({t, dst});
    return Status::Ok();
  };

  SF_RETURN_IF_ERROR(matrix("token_embd.weight", hp.n_embd, hp.n_vocab, &w->token_embd));
  SF_RETURN_IF_ERROR(vector("output_norm.weight", hp.n_embd, &w->output_norm));
  if (!hp.tied_output) SF_RETURN_IF_ERROR(matrix("output.weight", hp.n_embd, hp.n_vocab, &w->output));
  SF_RETURN_IF_ERROR(vector("rope_freqs.weight", hp.n_rot / 2, &w->rope_freqs, /*optional=*/true));

  w->layers.resize(hp.n_layer);
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerWeights& L = w->layers[l];
    SF_RETURN_IF_ERROR(vector(layer_name(l, "attn_norm.weight"), hp.n_embd, &L.attn_norm));
    SF_RETURN_IF_ERROR(matrix(layer_name(l, "attn_q.weight"), hp.n_embd, hp.q_dim(), &L.wq));
    SF_RETURN_IF_ERROR(matrix(layer_name(l, "attn_k.weight"), hp.n_embd, hp.kv_dim(), &L.wk));
    SF_RETURN_IF_ERROR(matrix(layer_name(l, "attn_v.weight"), hp.n_embd, hp.kv_dim(), &L.wv));
    SF_RETURN_IF_ERROR(matrix(layer_name(l, "attn_output.weight"), hp.q_dim(), hp.n_embd, &L.wo));
    SF_RETURN_IF_ERROR(vector(layer_name(l, "ffn_norm.weight"), hp.n_embd, &L.ffn_norm));
    SF_RETURN_IF_ERROR(matrix(layer_name(l, "ffn_gate.weight"), hp.n_embd, hp.n_ff, &L.ffn_gate));
    SF_RETURN_IF_ERROR(matrix(layer_name(l, "ffn_up.weight"), hp.n_embd, hp.n_ff, &L.ffn_up));
    SF_RETURN_IF_ERROR(matrix(layer_name(l, "ffn_down.weight"), hp.n_ff, hp.n_embd, &L.ffn_down));
    if (traits.qkv_bias) {
      SF_RETURN_IF_ERROR(vector(layer_name(l, "attn_q.bias"), hp.q_dim(), &L.bq));
      SF_RETURN_IF_ERROR(vector(layer_name(l, "attn_k.bias"), hp.kv_dim(), &L.bk));
      SF_RETURN_IF_ERROR(vector(layer_name(l, "attn_v.bias"), hp.kv_dim(), &L.bv));
    }
    if (traits.qk_norm) {
      SF_RETURN_IF_ERROR(vector(layer_name(l, "attn_q_norm.weight"), hp.head_dim, &L.q_norm));
      SF_RETURN_IF_ERROR(vector(layer_name(l, "attn_k_norm.weight"), hp.head_dim, &L.k_norm));
    }
  }

  // One allocation for all matrices; each starts on a 64-byte boundary.
  std::map<const gguf::TensorInfo*, size_t> placed;  // token_embd may be bound twice (tied)
  size_t total = 0;
  for (const auto& m : matrices) {
    if (placed.count(m.info)) continue;
    placed[m.info] = total;
    total += (m.info->n_bytes + 63) / 64 * 64;
  }
  w->storage_.allocate(total);

  const int fd = ::open(f.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Errorf("%s: cannot open: %s", f.path().c_str(), std::strerror(errno));
  Status st;
  for (const auto& [info, offset] : placed) {
    st = read_exact(fd, w->storage_.data() + offset, info->n_bytes, info->file_offset, f.path());
    if (!st.ok()) break;
  }
  std::vector<uint8_t> raw;
  for (const auto& v : vectors) {
    if (!st.ok()) break;
    raw.resize(v.info->n_bytes);
    st = read_exact(fd, raw.data(), raw.size(), v.info->file_offset, f.path());
    if (!st.ok()) break;
    std::vector<float> values(static_cast<size_t>(v.info->n_elements()));
    dequantize_row(v.info->type, raw.data(), values.data(), v.info->n_elements());
    w->vectors_.push_back(std::move(values));
    *v.dst = w->vectors_.back().data();
  }
  ::close(fd);
  SF_RETURN_IF_ERROR(st);

  for (const auto& m : matrices) {
    WeightMatrix& dst = *m.dst;
    dst.type = m.info->type;
    dst.cols = m.info->dims[0];
    dst.rows = m.info->rows();
    dst.row_stride = row_bytes(dst.type, dst.cols);
    dst.data = w->storage_.data() + placed[m.info];
  }
  if (hp.tied_output) w->output = w->token_embd;
  return w;
}

}  // namespace sf
