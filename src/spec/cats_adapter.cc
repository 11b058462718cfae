#include "spec/cats_adapter.h"

#include <cmath>
#include <cstring>
#include <random>

#include "base/check.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "ops/norm.h"
#include "spec/exit_scorer.h"

namespace sf {

namespace {

constexpr const char* kArch = "specflash-cats-adapter";
constexpr const char* kParamsTensor = "adapter.params";

float dot(const float* a, const float* b, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y[o] = W[o, :] . x for one row; W is [out, in].
void matvec(const float* W, const float* x, int64_t in, int64_t out, float* y) {
  for (int64_t o = 0; o < out; ++o) y[o] = dot(W + o * in, x, in);
}

// Normal-mode RoPE of one row: pairs (2i, 2i+1) of every head, angle pos * base^(-2i/hd)
// (the same formula as the trainer's rope_rotate).
void rope_row(float* x, int32_t pos, int n_head, int hd, double base) {
  for (int i = 0; i < hd / 2; ++i) {
    const double theta = pos * std::pow(base, -2.0 * i / hd);
    const float c = static_cast<float>(std::cos(theta)), s = static_cast<float>(std::sin(theta));
    for (int h = 0; h < n_head; ++h) {
      float* p = x + h * hd + 2 * i;
      const float x0 = p[0], x1 = p[1];
      p[0] = x0 * c - x1 * s;
      p[1] = x0 * s + x1 * c;
    }
  }
}

}  // namespace

const char* adapter_role_name(AdapterRole role) { return role == AdapterRole::kDraft ? "draft" : "verifier"; }

AdapterLayout AdapterLayout::for_model(const Model& target) {
  const ModelHParams& hp = target.hparams();
  AdapterLayout l;
  l.n_embd = hp.n_embd;
  l.n_head = hp.n_head;
  l.n_head_kv = hp.n_head_kv;
  l.head_dim = hp.head_dim;
  l.rms_eps = hp.rms_eps;
  l.rope_base = hp.rope_freq_base;
  return l;
}

std::vector<float> init_adapter_params(const AdapterLayout& l, uint64_t seed) {
  std::vector<float> p(static_cast<size_t>(l.total()), 0.0f);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::fill_n(p.begin() + l.attn_norm(), l.n_embd, 1.0f);
  for (int64_t i = l.wq(); i < l.wo(); ++i) p[i] = normal(rng);
  std::fill_n(p.begin() + l.out_norm(), l.n_embd, 1.0f);
  return p;
}

Status save_adapter(const std::string& path, const Model& target, AdapterRole role, int layer,
                    const std::vector<float>& params) {
  const AdapterLayout l = AdapterLayout::for_model(target);
  SF_CHECK(static_cast<int64_t>(params.size()) == l.total());
  gguf::GgufWriter w;
  w.set("general.architecture", gguf::Value::string(kArch));
  w.set("specflash.adapter.target", gguf::Value::string(model_fingerprint(target)));
  w.set("specflash.adapter.role", gguf::Value::string(adapter_role_name(role)));
  w.set("specflash.adapter.layer", gguf::Value::u32(static_cast<uint32_t>(layer)));
  std::vector<uint8_t> bytes(params.size() * sizeof(float));
  std::memcpy(bytes.data(), params.data(), bytes.size());
  w.add_tensor(kParamsTensor, GgmlType::F32, {l.total()}, std::move(bytes));
  return w.write(path);
}

Result<int> adapter_file_layer(const std::string& path) {
  SF_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::open(path));
  if (file.architecture() != kArch)
    return Status::Errorf("%s: not a CATS adapter (architecture '%s'); train one with `specflash train-adapter`",
                          path.c_str(), file.architecture().c_str());
  return static_cast<int>(file.get_int("specflash.adapter.layer").value_or(-1));
}

Result<std::unique_ptr<CatsAdapter>> CatsAdapter::load(const std::string& path, const Model& target, AdapterRole role,
                                                       int layer, int n_ctx, ThreadPool& pool) {
  SF_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::open(path));
  if (file.architecture() != kArch)
    return Status::Errorf("%s: not a CATS adapter (architecture '%s'); train one with `specflash train-adapter`",
                          path.c_str(), file.architecture().c_str());
  const std::string want = model_fingerprint(target);
  const std::string got = file.get_string("specflash.adapter.target").value_or("");
  if (got != want)
    return Status::Errorf("%s: this adapter was trained for another model (%s; the target is %s)", path.c_str(),
                          got.c_str(), want.c_str());
  const std::string got_role = file.get_string("specflash.adapter.role").value_or("");
  if (got_role != adapter_role_name(role))
    return Status::Errorf("%s: this is a %s adapter, but it was given as the %s adapter", path.c_str(),
                          got_role.c_str(), adapter_role_name(role));
  const int64_t got_layer = file.get_int("specflash.adapter.layer").value_or(-1);
  if (got_layer != layer)
    return Status::Errorf(
        "%s: this %s adapter reads the hidden state after layer %lld, but the %s boundary is %d "
        "(use %s %lld or train one for layer %d)",
        path.c_str(), got_role.c_str(), static_cast<long long>(got_layer),
        role == AdapterRole::kDraft ? "draft" : "shallow-verifier", layer,
        role == AdapterRole::kDraft ? "--cats-ldm" : "--cats-lsv", static_cast<long long>(got_layer), layer);
  const AdapterLayout l = AdapterLayout::for_model(target);
  const gguf::TensorInfo* t = file.find_tensor(kParamsTensor);
  if (!t || t->type != GgmlType::F32 || t->dims.size() != 1 || t->dims[0] != l.total())
    return Status::Errorf("%s: adapter tensor missing or of the wrong shape (want f32 %s [%lld])", path.c_str(),
                          kParamsTensor, static_cast<long long>(l.total()));
  // Straight into the weights: a byte buffer and a copy would double the adapter's memory
  // (36 MiB for a 1.1B target) at load time, above what the budget counts.
  std::vector<float> params(static_cast<size_t>(l.total()));
  SF_RETURN_IF_ERROR(file.read_tensor_into(*t, params.data()));
  return std::make_unique<CatsAdapter>(l, std::move(params), layer, n_ctx, pool);
}

CatsAdapter::CatsAdapter(const AdapterLayout& layout, std::vector<float> params, int layer, int n_ctx, ThreadPool& pool)
    : layout_(layout), params_(std::move(params)), layer_(layer), n_ctx_(n_ctx), pool_(pool) {
  SF_CHECK(static_cast<int64_t>(params_.size()) == layout_.total());
  k_cache_.assign(static_cast<size_t>(n_ctx) * layout_.kv_dim(), 0.0f);
  v_cache_.assign(static_cast<size_t>(n_ctx) * layout_.kv_dim(), 0.0f);
}

uint64_t CatsAdapter::resident_bytes_for(const AdapterLayout& l, int n_ctx) {
  return (static_cast<uint64_t>(l.total()) + 2ull * n_ctx * l.kv_dim()) * sizeof(float);
}

uint64_t CatsAdapter::resident_bytes() const { return resident_bytes_for(layout_, n_ctx_); }

void CatsAdapter::forward(const ForwardBatch& batch, const float* hidden, float* out) {
  const AdapterLayout& l = layout_;
  const int64_t n = batch.size(), E = l.n_embd, qd = l.q_dim(), kd = l.kv_dim(), hd = l.head_dim;
  const int group = l.n_head / l.n_head_kv;
  const float* P = params_.data();
  a_.resize(n * E);
  q_.resize(n * qd);
  att_.resize(n * qd);
  o_.resize(n * E);
  // Projections and the rows' K/V first (rows may attend to each other's cells).
  pool_.parallel_for(n, [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      float* a = a_.data() + r * E;
      rms_norm(hidden + r * E, P + l.attn_norm(), l.rms_eps, E, a);
      matvec(P + l.wq(), a, E, qd, q_.data() + r * qd);
      const int32_t cell = batch.kv_cells[r];
      SF_CHECK(cell >= 0 && cell < n_ctx_, "adapter cell %d outside its context of %d", cell, n_ctx_);
      float* k = k_cache_.data() + static_cast<size_t>(cell) * kd;
      matvec(P + l.wk(), a, E, kd, k);
      matvec(P + l.wv(), a, E, kd, v_cache_.data() + static_cast<size_t>(cell) * kd);
      rope_row(q_.data() + r * qd, batch.positions[r], l.n_head, static_cast<int>(hd), l.rope_base);
      rope_row(k, batch.positions[r], l.n_head_kv, static_cast<int>(hd), l.rope_base);
    }
  });
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  pool_.parallel_for(n, [&](int64_t b, int64_t e, int) {
    std::vector<float> s(static_cast<size_t>(batch.n_kv));
    for (int64_t r = b; r < e; ++r) {
      for (int h = 0; h < l.n_head; ++h) {
        const float* q = q_.data() + r * qd + h * hd;
        const int kh = h / group;
        float mx = -INFINITY;
        for (int32_t c = 0; c < batch.n_kv; ++c) {
          if (!batch.can_attend(r, c)) continue;
          s[c] = dot(q, k_cache_.data() + static_cast<size_t>(c) * kd + kh * hd, hd) * scale;
          mx = std::max(mx, s[c]);
        }
        float sum = 0;
        for (int32_t c = 0; c < batch.n_kv; ++c)
          if (batch.can_attend(r, c)) sum += (s[c] = std::exp(s[c] - mx));
        float* o = att_.data() + r * qd + h * hd;
        std::fill_n(o, hd, 0.0f);
        for (int32_t c = 0; c < batch.n_kv; ++c) {
          if (!batch.can_attend(r, c)) continue;
          const float w = s[c] / sum;
          const float* v = v_cache_.data() + static_cast<size_t>(c) * kd + kh * hd;
          for (int64_t i = 0; i < hd; ++i) o[i] += w * v[i];
        }
      }
      float* x = o_.data() + r * E;
      matvec(P + l.wo(), att_.data() + r * qd, qd, E, x);
      for (int64_t i = 0; i < E; ++i) x[i] += hidden[r * E + i];
      if (out) rms_norm(x, P + l.out_norm(), l.rms_eps, E, out + r * E);
    }
  });
}

void CatsAdapter::commit(const std::vector<int32_t>& cells) {
  const int kd = layout_.kv_dim();
  for (size_t i = 0; i < cells.size(); ++i) {
    const int to = n_past_ + static_cast<int>(i);
    SF_CHECK(cells[i] >= to && cells[i] < n_ctx_);
    if (cells[i] == to) continue;
    std::copy_n(k_cache_.data() + static_cast<size_t>(cells[i]) * kd, kd,
                k_cache_.data() + static_cast<size_t>(to) * kd);
    std::copy_n(v_cache_.data() + static_cast<size_t>(cells[i]) * kd, kd,
                v_cache_.data() + static_cast<size_t>(to) * kd);
  }
  n_past_ += static_cast<int>(cells.size());
}

void CatsAdapter::truncate(int n) {
  SF_CHECK(n >= 0 && n <= n_past_);
  n_past_ = n;
}

}  // namespace sf
