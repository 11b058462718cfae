#include "convert/model_quantizer.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "base/log.h"
#include "base/thread_pool.h"
#include "convert/conversion_progress.h"
#include "convert/gguf_stream_writer.h"
#include "convert/row_encoder.h"
#include "convert/tensor_type_policy.h"
#include "gguf/gguf_file.h"
#include "model/stored_layout.h"
#include "quant/dequantize.h"

namespace sf {
namespace {

Status check_weight_type(GgmlType type, const char* what) {
  if (!type_info(type).is_weight_type)
    return Status::Errorf("cannot quantize %s to %s: it is an activation format, not a weight type (supported: %s)",
                          what, type_name(type), supported_quant_target_list());
  return Status::Ok();
}

// The model facts the llama.cpp mix rules depend on.
TensorTypeContext make_context(const gguf::GgufFile& f, const QuantTarget& target, const QuantizeOptions& o) {
  TensorTypeContext ctx;
  ctx.target = target;
  ctx.pure = o.pure;
  ctx.output_type = o.output_type;
  ctx.token_embd_type = o.token_embd_type;
  ctx.has_output = f.find_tensor("output.weight") != nullptr;
  const std::string a = f.architecture() + ".";
  int max_layer = -1;
  for (const auto& t : f.tensors()) max_layer = std::max(max_layer, tensor_layer_index(t.name));
  ctx.n_layer = static_cast<int>(f.get_int(a + "block_count").value_or(max_layer + 1));
  const int64_t heads = f.get_int(a + "attention.head_count").value_or(1);
  const int64_t kv_heads = f.get_int(a + "attention.head_count_kv").value_or(heads);
  ctx.n_gqa = kv_heads > 0 ? static_cast<int>(heads / kv_heads) : 1;
  return ctx;
}

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

}  // namespace

Status quantize_model(const std::string& in, const std::string& out, GgmlType type, const QuantizeOptions& options) {
  SF_RETURN_IF_ERROR(check_weight_type(type, "the model"));
  if (options.output_type) SF_RETURN_IF_ERROR(check_weight_type(*options.output_type, "the output tensor"));
  if (options.token_embd_type) SF_RETURN_IF_ERROR(check_weight_type(*options.token_embd_type, "token_embd"));
  SF_ASSIGN_OR_RETURN(gguf::GgufFile f, gguf::GgufFile::open(in));
  if (f.tensors().empty()) return Status::Errorf("%s: has no tensors (a vocabulary-only file?)", in.c_str());
  if (has_row_panel_tensors(f))
    return Status::Errorf(
        "%s: stores matrices as row panels (specflash pack --row-panels); run `specflash pack %s ROWS.gguf` to get "
        "GGUF's rows back, then quantize ROWS.gguf",
        in.c_str(), in.c_str());

  const QuantTarget target{type, options.mix};
  const TensorTypeContext ctx = make_context(f, target, options);
  GgufStreamWriter writer(out);
  writer.copy_metadata_from(f);
  writer.set("general.file_type", gguf::Value::u32(llama_file_type(target)));
  writer.set("general.quantization_version", gguf::Value::u32(2));

  std::vector<GgmlType> out_types;
  FallbackReport fallbacks;
  uint64_t total_elements = 0;
  for (const auto& t : f.tensors()) {
    GgmlType out_type = t.type;
    if (is_convertible_matrix(t.name, t.dims)) {
      const TensorTypeChoice choice = choose_tensor_type(ctx, t.name, t.dims);
      fallbacks.add(t.name, t.dims[0], choice);
      out_type = choice.type;
    }
    out_types.push_back(out_type);
    writer.add_tensor(t.name, out_type, t.dims);
    total_elements += static_cast<uint64_t>(t.n_elements());
  }
  fallbacks.log();
  SF_RETURN_IF_ERROR(writer.begin());

  ThreadPool pool(options.n_threads);
  ConversionProgress progress("quantize", total_elements, f.tensors().size(), options.show_progress);
  std::vector<uint8_t> encoded;
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const gguf::TensorInfo& t = f.tensors()[i];
    const GgmlType out_type = out_types[i];
    SF_ASSIGN_OR_RETURN(std::vector<uint8_t> data, f.read_tensor_data(t));
    if (options.verbose)
      std::fprintf(stderr, "[%4zu/%4zu] %-32s %-5s -> %-5s [%s]\n", i + 1, f.tensors().size(), t.name.c_str(),
                   type_name(t.type), type_name(out_type), shape_string(t.dims).c_str());
    if (out_type == t.type) {
      // Same type: copy the bytes, so re-quantising never loses precision twice.
      SF_RETURN_IF_ERROR(writer.write_next_tensor(data.data(), data.size()));
    } else {
      const int64_t cols = t.cols(), rows = t.rows();
      const size_t src_stride = row_bytes(t.type, cols);
      encoded.resize(row_bytes(out_type, cols) * static_cast<size_t>(rows));
      encode_rows(
          pool, out_type, cols, rows,
          [&](int64_t r, float* dst) {
            dequantize_row(t.type, data.data() + static_cast<size_t>(r) * src_stride, dst, cols);
          },
          encoded.data());
      SF_RETURN_IF_ERROR(writer.write_next_tensor(encoded.data(), encoded.size()));
    }
    progress.tensor_done(static_cast<uint64_t>(t.n_elements()));
  }
  SF_RETURN_IF_ERROR(writer.finish());
  progress.finish(out, writer.bytes_written());
  return Status::Ok();
}

}  // namespace sf
