#include "convert/model_synthesizer.h"

#include <cmath>

#include "base/log.h"
#include "base/thread_pool.h"
#include "convert/conversion_progress.h"
#include "convert/gguf_stream_writer.h"
#include "convert/row_encoder.h"
#include "convert/synth_random.h"
#include "convert/tensor_type_policy.h"
#include "gguf/gguf_file.h"
#include "model/architecture.h"

namespace sf {
namespace {

// Upper bounds that keep every size computation far from overflow while allowing any
// real model shape (Llama-3 405B has n_embd 16384, n_ff 53248, 126 layers).
constexpr int kMaxEmbd = 1 << 16;
constexpr int kMaxFf = 1 << 18;
constexpr int kMaxLayers = 1 << 10;
constexpr int kMaxHeads = 1 << 10;
constexpr int kMaxCtx = 1 << 24;

Status check_range(const char* what, const char* flag, long long value, long long max) {
  if (value <= 0) return Status::Errorf("%s (%s) must be positive, got %lld", what, flag, value);
  if (value > max) return Status::Errorf("%s (%s) is %lld, more than the maximum %lld", what, flag, value, max);
  return Status::Ok();
}

int effective_head_dim(const SynthOptions& o) { return o.head_dim > 0 ? o.head_dim : o.n_embd / o.n_head; }
int effective_kv_heads(const SynthOptions& o) { return o.n_head_kv > 0 ? o.n_head_kv : o.n_head; }
bool is_qwen(const SynthOptions& o) { return o.arch != "llama"; }
double effective_rope_base(const SynthOptions& o) { return o.rope_base > 0 ? o.rope_base : is_qwen(o) ? 1e6 : 1e4; }
double effective_rms_eps(const SynthOptions& o) { return o.rms_eps > 0 ? o.rms_eps : is_qwen(o) ? 1e-6 : 1e-5; }

std::string layer_name(int layer, const char* suffix) { return "blk." + std::to_string(layer) + "." + suffix; }

// The vocabulary's token count, checking it is a usable vocabulary file.
Result<int64_t> vocab_size(const gguf::GgufFile& vocab) {
  const gguf::Value* tokens = vocab.find("tokenizer.ggml.tokens");
  if (tokens == nullptr || !tokens->is_array() || tokens->as_array().element_type != gguf::ValueType::kString)
    return Status::Errorf("%s: no tokenizer.ggml.tokens string array; not a vocabulary file", vocab.path().c_str());
  const int64_t n = static_cast<int64_t>(tokens->as_array().items.size());
  if (n == 0) return Status::Errorf("%s: the vocabulary has no tokens", vocab.path().c_str());
  if (!vocab.get_string("tokenizer.ggml.model"))
    return Status::Errorf("%s: no tokenizer.ggml.model; not a vocabulary file", vocab.path().c_str());
  return n;
}

void set_hparams_metadata(GgufStreamWriter& w, const SynthOptions& o) {
  using gguf::Value;
  const std::string a = o.arch + ".";
  const int head_dim = effective_head_dim(o);
  w.set(a + "context_length", Value::u32(o.n_ctx));
  w.set(a + "embedding_length", Value::u32(o.n_embd));
  w.set(a + "block_count", Value::u32(o.n_layer));
  w.set(a + "feed_forward_length", Value::u32(o.n_ff));
  w.set(a + "attention.head_count", Value::u32(o.n_head));
  w.set(a + "attention.head_count_kv", Value::u32(effective_kv_heads(o)));
  w.set(a + "attention.layer_norm_rms_epsilon", Value::f32(static_cast<float>(effective_rms_eps(o))));
  w.set(a + "rope.freq_base", Value::f32(static_cast<float>(effective_rope_base(o))));
  w.set(a + "rope.dimension_count", Value::u32(head_dim));
  // Only written when they differ from the default, as llama.cpp's converter does.
  if (o.n_embd % o.n_head != 0 || head_dim != o.n_embd / o.n_head) {
    w.set(a + "attention.key_length", Value::u32(head_dim));
    w.set(a + "attention.value_length", Value::u32(head_dim));
  }
}

}  // namespace

Status validate_synth_options(const SynthOptions& o) {
  const ArchitectureTraits* traits = find_architecture(o.arch);
  if (traits == nullptr)
    return Status::Errorf("unsupported architecture '%s' (supported: %s)", o.arch.c_str(),
                          supported_architecture_list().c_str());
  if (o.output_path.empty()) return Status::Error("no output file given (-o)");
  if (o.vocab_from.empty()) return Status::Error("no vocabulary file given (--vocab-from)");
  SF_RETURN_IF_ERROR(check_range("embedding size", "--embd", o.n_embd, kMaxEmbd));
  SF_RETURN_IF_ERROR(check_range("layer count", "--layers", o.n_layer, kMaxLayers));
  SF_RETURN_IF_ERROR(check_range("head count", "--heads", o.n_head, kMaxHeads));
  SF_RETURN_IF_ERROR(check_range("FFN size", "--ffn", o.n_ff, kMaxFf));
  SF_RETURN_IF_ERROR(check_range("context length", "--ctx", o.n_ctx, kMaxCtx));
  if (o.n_head_kv < 0) return Status::Errorf("KV head count (--kv-heads) must be positive, got %d", o.n_head_kv);
  if (o.head_dim < 0) return Status::Errorf("head size (--head-dim) must be positive, got %d", o.head_dim);
  const int kv_heads = effective_kv_heads(o);
  if (kv_heads > o.n_head || o.n_head % kv_heads != 0)
    return Status::Errorf("KV head count %d does not divide the head count %d (--kv-heads must divide --heads)",
                          kv_heads, o.n_head);
  if (o.head_dim == 0 && o.n_embd % o.n_head != 0)
    return Status::Errorf("embedding size %d is not divisible by %d heads (pass --head-dim to set the head size)",
                          o.n_embd, o.n_head);
  const int head_dim = effective_head_dim(o);
  if (head_dim % 2 != 0 || head_dim > 4096)
    return Status::Errorf("head size %d must be even (RoPE rotates pairs) and at most 4096", head_dim);
  if (!std::isfinite(o.rope_base) || o.rope_base < 0)
    return Status::Errorf("RoPE base (--rope-base) must be positive, got %g", o.rope_base);
  if (!std::isfinite(o.rms_eps) || o.rms_eps < 0 || o.rms_eps >= 1)
    return Status::Errorf("RMSNorm epsilon must be in (0, 1), got %g", o.rms_eps);
  if (!type_info(o.type.type).is_weight_type)
    return Status::Errorf("%s is not a weight type (supported: %s)", type_name(o.type.type),
                          supported_quant_target_list());
  return Status::Ok();
}

std::vector<SynthTensorSpec> synth_tensor_specs(const SynthOptions& o, int64_t n_vocab) {
  const ArchitectureTraits& traits = *find_architecture(o.arch);
  const int64_t embd = o.n_embd, ff = o.n_ff, head_dim = effective_head_dim(o);
  const int64_t q_dim = o.n_head * head_dim, kv_dim = effective_kv_heads(o) * head_dim;
  // N(0, 1/fan_in): a projection of a unit-variance input keeps unit variance.
  auto matrix = [](std::string name, int64_t in, int64_t out) {
    return SynthTensorSpec{std::move(name), {in, out}, 0.0f, static_cast<float>(1.0 / std::sqrt(double(in)))};
  };
  auto norm = [](std::string name, int64_t n) { return SynthTensorSpec{std::move(name), {n}, 1.0f, 0.05f}; };
  auto bias = [](std::string name, int64_t n) { return SynthTensorSpec{std::move(name), {n}, 0.0f, 0.2f}; };

  std::vector<SynthTensorSpec> specs;
  specs.push_back(matrix("token_embd.weight", embd, n_vocab));
  for (int l = 0; l < o.n_layer; ++l) {
    specs.push_back(norm(layer_name(l, "attn_norm.weight"), embd));
    specs.push_back(matrix(layer_name(l, "attn_q.weight"), embd, q_dim));
    specs.push_back(matrix(layer_name(l, "attn_k.weight"), embd, kv_dim));
    specs.push_back(matrix(layer_name(l, "attn_v.weight"), embd, kv_dim));
    if (traits.qkv_bias) {
      specs.push_back(bias(layer_name(l, "attn_q.bias"), q_dim));
      specs.push_back(bias(layer_name(l, "attn_k.bias"), kv_dim));
      specs.push_back(bias(layer_name(l, "attn_v.bias"), kv_dim));
    }
    if (traits.qk_norm) {
      specs.push_back(norm(layer_name(l, "attn_q_norm.weight"), head_dim));
      specs.push_back(norm(layer_name(l, "attn_k_norm.weight"), head_dim));
    }
    specs.push_back(matrix(layer_name(l, "attn_output.weight"), q_dim, embd));
    specs.push_back(norm(layer_name(l, "ffn_norm.weight"), embd));
    specs.push_back(matrix(layer_name(l, "ffn_gate.weight"), embd, ff));
    specs.push_back(matrix(layer_name(l, "ffn_up.weight"), embd, ff));
    specs.push_back(matrix(layer_name(l, "ffn_down.weight"), ff, embd));
  }
  specs.push_back(norm("output_norm.weight", embd));
  if (!o.tied) specs.push_back(matrix("output.weight", embd, n_vocab));
  return specs;
}

Status synthesize_model(const SynthOptions& o) {
  SF_RETURN_IF_ERROR(validate_synth_options(o));
  auto vocab_file = gguf::GgufFile::open(o.vocab_from);
  if (!vocab_file.ok()) return vocab_file.status().with_context("vocabulary");
  const gguf::GgufFile& vocab = *vocab_file;
  SF_ASSIGN_OR_RETURN(const int64_t n_vocab, vocab_size(vocab));

  GgufStreamWriter w(o.output_path);
  w.set("general.architecture", gguf::Value::string(o.arch));
  w.set("general.name",
        gguf::Value::string(o.name.empty() ? "synth-" + o.arch + "-" + std::to_string(o.n_embd) + "x" +
                                                 std::to_string(o.n_layer) + "-s" + std::to_string(o.seed)
                                           : o.name));
  w.set("general.file_type", gguf::Value::u32(llama_file_type(o.type)));
  w.set("general.quantization_version", gguf::Value::u32(2));
  w.set("general.alignment", gguf::Value::u32(gguf::kDefaultAlignment));
  // Recorded so a benchmark can say which synthetic model it ran.
  w.set("specflash.synth.seed", gguf::Value::u64(o.seed));
  set_hparams_metadata(w, o);
  w.copy_metadata_from(vocab, "tokenizer.");

  TensorTypeContext ctx;
  ctx.target = o.type;
  ctx.n_layer = o.n_layer;
  ctx.n_gqa = o.n_head / effective_kv_heads(o);
  ctx.has_output = !o.tied;
  const std::vector<SynthTensorSpec> specs = synth_tensor_specs(o, n_vocab);
  std::vector<GgmlType> types;
  FallbackReport fallbacks;
  uint64_t total_elements = 0;
  for (const auto& s : specs) {
    // Vectors stay F32 like the norms and biases of every llama.cpp model.
    GgmlType type = GgmlType::F32;
    if (is_convertible_matrix(s.name, s.dims)) {
      const TensorTypeChoice choice = choose_tensor_type(ctx, s.name, s.dims);
      fallbacks.add(s.name, s.dims[0], choice);
      type = choice.type;
    }
    types.push_back(type);
    w.add_tensor(s.name, type, s.dims);
    total_elements += static_cast<uint64_t>(s.dims[0]) * (s.dims.size() > 1 ? s.dims[1] : 1);
  }
  fallbacks.log();
  SF_RETURN_IF_ERROR(w.begin());

  ThreadPool pool(o.n_threads);
  ConversionProgress progress("synth", total_elements, specs.size(), o.show_progress);
  std::vector<uint8_t> encoded;
  for (size_t i = 0; i < specs.size(); ++i) {
    const SynthTensorSpec& s = specs[i];
    const int64_t cols = s.dims[0], rows = s.dims.size() > 1 ? s.dims[1] : 1;
    const uint64_t key = tensor_stream_key(o.seed, s.name);
    encoded.resize(row_bytes(types[i], cols) * static_cast<size_t>(rows));
    encode_rows(
        pool, types[i], cols, rows,
        [&](int64_t r, float* dst) {
          const uint64_t base = static_cast<uint64_t>(r) * static_cast<uint64_t>(cols);
          for (int64_t c = 0; c < cols; ++c) dst[c] = s.mean + s.stddev * normalish(key, base + c);
        },
        encoded.data());
    SF_RETURN_IF_ERROR(w.write_next_tensor(encoded.data(), encoded.size()));
    progress.tensor_done(static_cast<uint64_t>(cols * rows));
  }
  SF_RETURN_IF_ERROR(w.finish());
  progress.finish(o.output_path, w.bytes_written());
  return Status::Ok();
}

}  // namespace sf
