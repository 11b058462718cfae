// specflash pack IN.gguf OUT.gguf
#include "cli/pack_command.h"

#include <string>

#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "convert/model_packer.h"

namespace sf::cli {

int pack_command(int argc, char** argv) {
  CLI::App app{
      "Rewrite a GGUF model so each layer's tensors are contiguous and 4096-aligned, which lets the\n"
      "streamer read a layer with one direct read. Metadata (except general.alignment) and tensor\n"
      "bytes are copied unchanged (with --row-panels, the matrices it names are rearranged and\n"
      "renamed). OUT may equal IN.",
      "specflash pack"};
  show_defaults_in_help(app);
  std::string in, out;
  bool quiet = false;
  app.add_option("input", in, "input GGUF model")->required();
  app.add_option("output", out, "output GGUF file")->required();
  bool row_panels = false;
  app.add_flag("--row-panels", row_panels,
               "also store the block-quantised layer matrices (Q4_0..Q8_0, Q2_K..Q6_K) as row panels, the layout of\n"
               "this engine's AVX512-VNNI decode kernels, so streamed layers need no conversion per pass.\n"
               "specflash only: such tensors are renamed '<name>.row_panels16', so other GGUF readers refuse the\n"
               "file instead of misreading it;\n"
               "pack again without this flag to get standard rows back");
  app.add_flag("-q,--quiet", quiet, "no progress or summary on stderr");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;

  PackOptions options;
  options.show_progress = !quiet;
  options.row_panels = row_panels;
  // OUT may equal IN: the packer stages OUT.tmp and renames it over IN at the end.
  if (Status st = check_model_output_path(out, {in}, /*allow_same_as_input=*/true); !st.ok()) return fail(st);
  remove_staging_file_on_signal(out);
  const Status st = pack_model(in, out, options);
  return st.ok() ? 0 : fail(st);
}

}  // namespace sf::cli
