#include "model/model_weights.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "model/architecture.h"
#include "model/stored_layout.h"
#include "quant/dequantize.h"

namespace sf {
namespace {

std::string layer_name(int layer, const char* suffix) { return "blk." + std::to_string(layer) + "." + suffix; }

// Looks up tensors and checks their shapes, so a malformed model fails at load with the
// tensor's name rather than producing garbage later.
class TensorBinder {
 public:
  TensorBinder(const gguf::GgufFile& f) : f_(f) {}

  Result<const gguf::TensorInfo*> find(const std::string& name, std::vector<int64_t> dims, bool optional = false) {
    return check_shape(f_.find_tensor(name), name, std::move(dims), optional);
  }

  // A matrix in either stored layout (model/stored_layout.h).
  Result<StoredMatrix> find_matrix(const std::string& name, std::vector<int64_t> dims) {
    StoredMatrix m = find_stored_matrix(f_, name);
    SF_ASSIGN_OR_RETURN(m.info, check_shape(m.info, name, std::move(dims), /*optional=*/false));
    if (m.layout == WeightLayout::kRowPanels && !can_store_as_row_panels(name, m.info->type, m.info->rows()))
      return Status::Errorf("%s: tensor '%s' cannot be stored as row panels (%s, %lld rows): the file is corrupt",
                            f_.path().c_str(), m.info->name.c_str(), type_name(m.info->type),
                            static_cast<long long>(m.info->rows()));
    return m;
  }

 private:
  Result<const gguf::TensorInfo*> check_shape(const gguf::TensorInfo* t, const std::string& name,
                                              std::vector<int64_t> dims, bool optional) {
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
      return Status::Errorf("%s: tensor '%s' has shape %s, expected %s", f_.path().c_str(), name.c_str(), have.c_str(),
                            want.c_str());
    }
    return t;
  }

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
  // Resident weights now live in our own memory; leaving the file's pages in the page cache
  // too would double their cost and hide whether streamed reads really come from storage.
  ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(n), POSIX_FADV_DONTNEED);
  return Status::Ok();
}

}  // namespace

std::vector<std::string> layer_matrix_tensor_names(int layer) {
  std::vector<std::string> names;
  for (const char* s : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight", "ffn_gate.weight",
                        "ffn_up.weight", "ffn_down.weight"})
    names.push_back(layer_name(layer, s));
  return names;
}

Result<std::unique_ptr<ModelWeights>> ModelWeights::bind(const gguf::GgufFile& f, const ModelHParams& hp) {
  auto w = std::make_unique<ModelWeights>();
  w->file_ = &f;
  w->tied_ = hp.tied_output;
  const ArchitectureTraits& traits = architecture_traits(hp.arch);
  TensorBinder bind(f);
  w->unit_tensors_.resize(hp.n_layer + 1);
  w->unit_matrices_.resize(hp.n_layer + 1);
  w->unit_stored_layouts_.resize(hp.n_layer + 1);
  w->unit_resident_.assign(hp.n_layer + 1, false);

  struct VectorSlot {
    const gguf::TensorInfo* info;
    const float** dst;
  };
  std::vector<VectorSlot> vectors;
  int unit = 0;
  int converted_on_read = 0;  // matrices stored as panels that run as rows (no kernel here)
  auto matrix = [&](const std::string& name, int64_t in, int64_t out, WeightMatrix* dst) -> Status {
    SF_ASSIGN_OR_RETURN(const StoredMatrix stored, bind.find_matrix(name, {in, out}));
    const gguf::TensorInfo* t = stored.info;
    dst->type = t->type;
    dst->cols = t->dims[0];
    dst->rows = t->rows();
    dst->row_stride = row_bytes(dst->type, dst->cols);
    dst->data = nullptr;
    // Stored panels stay panels where this CPU has their kernel; elsewhere they are turned
    // back into rows after every read (load_units, and the streamer per pass).
    const bool keeps_panels =
        stored.layout == WeightLayout::kRowPanels && preferred_layout(dst->type, dst->rows) == WeightLayout::kRowPanels;
    dst->layout = keeps_panels ? WeightLayout::kRowPanels : WeightLayout::kRows;
    if (stored.layout == WeightLayout::kRowPanels && !keeps_panels) ++converted_on_read;
    w->unit_tensors_[unit].push_back(t);
    w->unit_matrices_[unit].push_back(dst);
    w->unit_stored_layouts_[unit].push_back(stored.layout);
    return Status::Ok();
  };
  auto vector = [&](const std::string& name, int64_t n, const float** dst, bool optional = false) -> Status {
    SF_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, bind.find(name, {n}, optional));
    if (t) vectors.push_back({t, dst});
    return Status::Ok();
  };

  SF_ASSIGN_OR_RETURN(const gguf::TensorInfo* embd, bind.find("token_embd.weight", {hp.n_embd, hp.n_vocab}));
  SF_RETURN_IF_ERROR(vector("output_norm.weight", hp.n_embd, &w->output_norm));
  SF_RETURN_IF_ERROR(vector("rope_freqs.weight", hp.n_rot / 2, &w->rope_freqs, /*optional=*/true));
  w->layers.resize(hp.n_layer);
  for (int l = 0; l < hp.n_layer; ++l) {
    unit = l;
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
  unit = hp.n_layer;
  if (!hp.tied_output) SF_RETURN_IF_ERROR(matrix("output.weight", hp.n_embd, hp.n_vocab, &w->output));

  if (converted_on_read > 0)
    SF_LOG_WARN(
        "%s stores %d matrices as row panels (specflash pack --row-panels) but this CPU has no row-panel kernel "
        "(AVX512-VNNI): every read of them is converted back to rows. `specflash pack %s OUT.gguf` writes rows "
        "for this machine.",
        f.path().c_str(), converted_on_read, f.path().c_str());

  // Token embeddings and the small vectors are always resident.
  const int fd = ::open(f.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Errorf("%s: cannot open: %s", f.path().c_str(), std::strerror(errno));
  w->embd_storage_.allocate(embd->n_bytes);
  Status st = read_exact(fd, w->embd_storage_.data(), embd->n_bytes, embd->file_offset, f.path());
  std::vector<uint8_t> raw;
  for (const auto& v : vectors) {
    if (!st.ok()) break;
    raw.resize(v.info->n_bytes);
    st = read_exact(fd, raw.data(), raw.size(), v.info->file_offset, f.path());
    if (!st.ok()) break;
    std::vector<float> values(static_cast<size_t>(v.info->n_elements()));
    dequantize_row(v.info->type, raw.data(), values.data(), v.info->n_elements());
    w->vector_bytes_ += values.size() * sizeof(float);
    w->vectors_.push_back(std::move(values));
    *v.dst = w->vectors_.back().data();
  }
  ::close(fd);
  SF_RETURN_IF_ERROR(st);
  w->token_embd = {embd->type, embd->dims[0], embd->rows(), row_bytes(embd->type, embd->dims[0]),
                   w->embd_storage_.data()};
  if (hp.tied_output) {
    w->output = w->token_embd;
    w->unit_resident_[hp.n_layer] = true;
  }
  return w;
}

Result<std::unique_ptr<ModelWeights>> ModelWeights::load_resident(const gguf::GgufFile& f, const ModelHParams& hp) {
  SF_ASSIGN_OR_RETURN(std::unique_ptr<ModelWeights> w, bind(f, hp));
  SF_RETURN_IF_ERROR(w->load_units(std::vector<bool>(w->n_units(), true)));
  return w;
}

Status ModelWeights::load_units(const std::vector<bool>& resident) {
  SF_CHECK(static_cast<int>(resident.size()) == n_units());
  SF_CHECK(storage_.size() == 0, "load_units called twice");
  size_t total = 0;
  for (int u = 0; u < n_units(); ++u)
    if (resident[u])
      for (const auto* t : unit_tensors_[u]) total += (t->n_bytes + 63) / 64 * 64;
  if (total == 0) return Status::Ok();
  storage_.allocate_huge(total);
  const int fd = ::open(file_->path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Errorf("%s: cannot open: %s", file_->path().c_str(), std::strerror(errno));
  size_t offset = 0;
  Status st;
  for (int u = 0; u < n_units() && st.ok(); ++u) {
    if (!resident[u]) continue;
    for (size_t i = 0; i < unit_tensors_[u].size() && st.ok(); ++i) {
      const gguf::TensorInfo* t = unit_tensors_[u][i];
      st = read_exact(fd, storage_.data() + offset, t->n_bytes, t->file_offset, file_->path());
      WeightMatrix& m = *unit_matrices_[u][i];
      m.data = storage_.data() + offset;
      // Resident matrices take the layout this CPU's kernels decode fastest (same bytes,
      // same floats); streamed ones are read per pass and keep the file's (or rows, where
      // the file's panels have no kernel here: LayerStreamer converts them per pass).
      const WeightLayout stored = unit_stored_layouts_[u][i];
      if (st.ok() && stored == WeightLayout::kRowPanels && m.layout == WeightLayout::kRows) {
        unpack_row_panels(m.type, storage_.data() + offset, m.rows, m.cols);
      } else if (st.ok() && stored == WeightLayout::kRows &&
                 preferred_layout(m.type, m.rows) == WeightLayout::kRowPanels) {
        pack_row_panels(m.type, storage_.data() + offset, m.rows, m.cols);
        m.layout = WeightLayout::kRowPanels;
      }
      offset += (t->n_bytes + 63) / 64 * 64;
    }
    unit_resident_[u] = true;
  }
  ::close(fd);
  return st;
}

int ModelWeights::streamed_rows_with_panel_kernel() const {
  int count = 0;
  for (int u = 0; u < n_units(); ++u) {
    if (unit_resident_[u]) continue;
    for (size_t i = 0; i < unit_matrices_[u].size(); ++i) {
      const WeightMatrix& m = *unit_matrices_[u][i];
      if (unit_stored_layouts_[u][i] == WeightLayout::kRows &&
          preferred_layout(m.type, m.rows) == WeightLayout::kRowPanels)
        ++count;
    }
  }
  return count;
}

bool ModelWeights::fully_resident() const {
  for (bool r : unit_resident_)
    if (!r) return false;
  return true;
}

uint64_t ModelWeights::unit_bytes(int unit) const {
  uint64_t bytes = 0;
  for (const auto* t : unit_tensors_[unit]) bytes += t->n_bytes;
  return bytes;
}

uint64_t ModelWeights::base_resident_bytes() const { return embd_storage_.size() + vector_bytes_; }

}  // namespace sf
