#include "spec/exit_scorer.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "base/check.h"
#include "base/fnv1a.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "ops/norm.h"
#include "quant/dequantize.h"

namespace sf {
namespace {

constexpr const char* kNormTensor = "predictor.norm";
constexpr const char* kWeightTensor = "predictor.weight";

float dot(const float* a, const float* b, int n) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

std::vector<uint8_t> float_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

}  // namespace

void LogitLensScorer::score(const float* hidden, const std::vector<int32_t>& tokens, float* out) const {
  const ModelHParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  SF_CHECK(w.unit_resident(w.head_unit()) || w.head_is_tied(), "the logit lens needs a resident LM head");
  std::vector<float> x(hp.n_embd), row(hp.n_embd);
  rms_norm(hidden, w.output_norm, hp.rms_eps, hp.n_embd, x.data());
  for (size_t i = 0; i < tokens.size(); ++i) {
    dequantize_weight_row(w.output, tokens[i], row.data());
    out[i] = dot(row.data(), x.data(), hp.n_embd);
  }
}

std::string model_fingerprint(const Model& model) {
  const ModelHParams& hp = model.hparams();
  const WeightMatrix& e = model.weights().token_embd;
  // FNV-1a over the first embedding rows: random or trained, two models differ there.
  // The seed is not FNV's offset basis (a digit short of it); it stays, because committed
  // predictor and adapter files carry fingerprints made with it.
  const uint64_t h = fnv1a(e.data, std::min<size_t>(e.n_bytes(), 1 << 16), 1469598103934665603ull);
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s/L%d/E%d/V%d/%016" PRIx64, hp.arch_name.c_str(), hp.n_layer, hp.n_embd, hp.n_vocab,
                h);
  return buf;
}

Result<std::unique_ptr<LinearPredictorScorer>> LinearPredictorScorer::load(const std::string& path, const Model& target,
                                                                           int exit_layer) {
  SF_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::open(path));
  const std::string want = model_fingerprint(target);
  const std::string got = file.get_string("specflash.predictor.target").value_or("");
  if (got.empty())
    return Status::Errorf(
        "%s: not a specflash predictor (no specflash.predictor.target key); train one with "
        "`specflash train-predictor`",
        path.c_str());
  if (got != want)
    return Status::Errorf(
        "%s: this predictor was trained for another model (%s; the target is %s); train one for "
        "this target with `specflash train-predictor`",
        path.c_str(), got.c_str(), want.c_str());
  const int64_t layer = file.get_int("specflash.predictor.exit_layer").value_or(-1);
  if (layer != exit_layer)
    return Status::Errorf(
        "%s: this predictor reads the hidden state after layer %lld, but the exit layer is %d "
        "(use --lever-exit-layer %lld or retrain)",
        path.c_str(), static_cast<long long>(layer), exit_layer, static_cast<long long>(layer));
  const ModelHParams& hp = target.hparams();
  const gguf::TensorInfo* norm = file.find_tensor(kNormTensor);
  const gguf::TensorInfo* weight = file.find_tensor(kWeightTensor);
  if (!norm || !weight || norm->type != GgmlType::F32 || weight->type != GgmlType::F32 || norm->dims.size() != 1 ||
      norm->dims[0] != hp.n_embd || weight->dims.size() != 2 || weight->dims[0] != hp.n_embd ||
      weight->dims[1] != hp.n_vocab)
    return Status::Errorf("%s: predictor tensors missing or of the wrong shape (want f32 %s [%d] and %s [%d, %d])",
                          path.c_str(), kNormTensor, hp.n_embd, kWeightTensor, hp.n_vocab, hp.n_embd);
  auto p = std::unique_ptr<LinearPredictorScorer>(new LinearPredictorScorer());
  p->n_embd_ = hp.n_embd;
  p->eps_ = hp.rms_eps;
  SF_ASSIGN_OR_RETURN(std::vector<uint8_t> nb, file.read_tensor_data(*norm));
  SF_ASSIGN_OR_RETURN(std::vector<uint8_t> wb, file.read_tensor_data(*weight));
  p->norm_.resize(hp.n_embd);
  p->weight_.resize(static_cast<size_t>(hp.n_vocab) * hp.n_embd);
  std::memcpy(p->norm_.data(), nb.data(), p->norm_.size() * sizeof(float));
  std::memcpy(p->weight_.data(), wb.data(), p->weight_.size() * sizeof(float));
  return p;
}

void LinearPredictorScorer::score(const float* hidden, const std::vector<int32_t>& tokens, float* out) const {
  std::vector<float> x(n_embd_);
  rms_norm(hidden, norm_.data(), eps_, n_embd_, x.data());
  for (size_t i = 0; i < tokens.size(); ++i)
    out[i] = dot(weight_.data() + static_cast<size_t>(tokens[i]) * n_embd_, x.data(), n_embd_);
}

Status LinearPredictorScorer::save(const std::string& path, const Model& target, int exit_layer,
                                   const std::vector<float>& norm, const std::vector<float>& weight) {
  const ModelHParams& hp = target.hparams();
  SF_CHECK(norm.size() == static_cast<size_t>(hp.n_embd) &&
           weight.size() == static_cast<size_t>(hp.n_vocab) * hp.n_embd);
  gguf::GgufWriter w;
  w.set("general.architecture", gguf::Value::string("specflash-predictor"));
  w.set("specflash.predictor.target", gguf::Value::string(model_fingerprint(target)));
  w.set("specflash.predictor.exit_layer", gguf::Value::u32(static_cast<uint32_t>(exit_layer)));
  w.add_tensor(kNormTensor, GgmlType::F32, {hp.n_embd}, float_bytes(norm));
  w.add_tensor(kWeightTensor, GgmlType::F32, {hp.n_embd, hp.n_vocab}, float_bytes(weight));
  return w.write(path);
}

}  // namespace sf
