// specflash quantize: convert a model's weight matrices to another type.
#include <optional>
#include <string>

#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "convert/model_quantizer.h"
#include "convert/quant_target.h"

namespace sf::cli {

namespace {
// --output-type / --token-embd-type take a plain weight type name (no mix).
Result<std::optional<GgmlType>> parse_override(const std::string& name, const char* flag) {
  if (name.empty()) return std::optional<GgmlType>();
  const auto t = parse_quant_target(name);
  if (!t)
    return Status::Errorf("unknown type '%s' for %s (supported: %s)", name.c_str(), flag,
                          supported_quant_target_list());
  return std::optional<GgmlType>(t->type);
}
}  // namespace

int quantize_command(int argc, char** argv) {
  CLI::App app{
      "Convert a GGUF model's weight matrices to another type. Norms and biases stay as they are; the\n"
      "per-tensor types follow llama-quantize (Q6_K LM head, more bits for some attn_v/ffn_down\n"
      "layers in the K-quant mixes).",
      "specflash quantize"};
  show_defaults_in_help(app);
  std::string in, out, type_name_arg, output_type, token_embd_type;
  QuantizeOptions options;
  bool quiet = false;
  app.add_option("input", in, "input GGUF model")->required();
  app.add_option("output", out, "output GGUF file")->required();
  app.add_option("type", type_name_arg, std::string("target type: ") + supported_quant_target_list())->required();
  app.add_flag("--pure", options.pure, "give every matrix the target type (no mix, no Q6_K output)");
  app.add_option("--output-type", output_type, "type of the LM head (output.weight, or token_embd when tied)");
  app.add_option("--token-embd-type", token_embd_type, "type of token_embd.weight");
  app.add_option("-t,--threads", options.n_threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_flag("-q,--quiet", quiet, "no progress or summary on stderr");
  app.add_flag("-v,--verbose", options.verbose, "one line per tensor on stderr");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;

  const auto target = parse_quant_target(type_name_arg);
  if (!target)
    return usage_error("unknown quantization type '" + type_name_arg +
                       "' (supported: " + supported_quant_target_list() + ")");
  options.mix = target->mix;
  auto out_override = parse_override(output_type, "--output-type");
  if (!out_override.ok()) return usage_error(out_override.status());
  auto embd_override = parse_override(token_embd_type, "--token-embd-type");
  if (!embd_override.ok()) return usage_error(embd_override.status());
  options.output_type = *out_override;
  options.token_embd_type = *embd_override;
  options.show_progress = !quiet;
  if (Status st = check_model_output_path(out, {in}); !st.ok()) return fail(st);
  remove_staging_file_on_signal(out);

  const Status st = quantize_model(in, out, target->type, options);
  return st.ok() ? 0 : fail(st);
}

}  // namespace sf::cli
