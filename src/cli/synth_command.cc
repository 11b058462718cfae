// specflash synth: write a deterministic random-weight model of any supported shape.
#include <string>

#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "convert/model_synthesizer.h"
#include "convert/quant_target.h"

namespace sf::cli {

int synth_command(int argc, char** argv) {
  CLI::App app{
      "Write a random-weight model (deterministic in --seed) in a real architecture and size, with the\n"
      "vocabulary of an existing GGUF, for benchmarks that need no download.",
      "specflash synth"};
  show_defaults_in_help(app);
  SynthOptions o;
  std::string type = "F16";
  bool quiet = false;
  app.add_option("--arch", o.arch, "architecture: llama, qwen2 or qwen3")->required();
  app.add_option("--vocab-from", o.vocab_from, "GGUF file whose tokenizer.* metadata (and so n_vocab) is copied")
      ->required();
  app.add_option("--embd", o.n_embd, "embedding size")->required();
  app.add_option("--layers", o.n_layer, "number of decoder layers")->required();
  app.add_option("--heads", o.n_head, "attention heads")->required();
  app.add_option("--kv-heads", o.n_head_kv, "key/value heads (GQA; default: --heads)");
  app.add_option("--ffn", o.n_ff, "feed-forward size")->required();
  app.add_option("--head-dim", o.head_dim, "head size (default: embd / heads)");
  app.add_option("--ctx", o.n_ctx, "training context length written to the metadata");
  app.add_option("--rope-base", o.rope_base, "RoPE frequency base (default: 10000 llama, 1000000 qwen)");
  app.add_option("--rms-eps", o.rms_eps, "RMSNorm epsilon (default: 1e-5 llama, 1e-6 qwen)");
  app.add_flag("--tied", o.tied, "no output.weight: the LM head shares token_embd");
  app.add_option("--type", type, std::string("weight type: ") + supported_quant_target_list() + " (default F16)");
  app.add_option("--seed", o.seed, "random seed (same seed, same bytes)");
  app.add_option("--name", o.name, "general.name (default: synth-<arch>-<embd>x<layers>-s<seed>)");
  app.add_option("-o,--output", o.output_path, "output GGUF file")->required();
  app.add_option("-t,--threads", o.n_threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_flag("-q,--quiet", quiet, "no progress or summary on stderr");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;

  const auto target = parse_quant_target(type);
  if (!target)
    return usage_error("unknown weight type '" + type + "' (supported: " + supported_quant_target_list() + ")");
  o.type = *target;
  o.show_progress = !quiet;
  if (Status st = check_model_output_path(o.output_path, {o.vocab_from}); !st.ok()) return fail(st);
  remove_staging_file_on_signal(o.output_path);
  const Status st = synthesize_model(o);
  return st.ok() ? 0 : fail(st);
}

}  // namespace sf::cli
