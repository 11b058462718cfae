// specflash info: architecture, sizes, weight types and metadata of a GGUF file.
#include <cstdio>
#include <map>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"

namespace sf::cli {

int info_command(int argc, char** argv) {
  CLI::App app{"Print a GGUF file's architecture, hyper-parameters, weight types and metadata.", "specflash info"};
  std::string path;
  bool list_tensors = false;
  app.add_option("model", path, "GGUF file")->required();
  app.add_flag("--tensors", list_tensors, "list every tensor with its type, shape and offset");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;

  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) return fail(file.status());
  const gguf::GgufFile& f = *file;

  std::printf("file:          %s\n", path.c_str());
  std::printf("GGUF version:  %u\n", f.version());
  std::printf("size:          %.2f MiB\n", f.file_size() / 1048576.0);
  std::printf("architecture:  %s\n",
              f.architecture().empty() ? "(none: vocabulary-only file?)" : f.architecture().c_str());
  auto hp = read_hparams(f);
  if (hp.ok()) {
    const ModelHParams& h = *hp;
    std::printf("vocabulary:    %d tokens\n", h.n_vocab);
    std::printf("layers:        %d\n", h.n_layer);
    std::printf("embedding:     %d\n", h.n_embd);
    std::printf("heads:         %d (KV heads %d, head size %d)\n", h.n_head, h.n_head_kv, h.head_dim);
    std::printf("FFN:           %d\n", h.n_ff);
    std::printf("context:       %d (trained)\n", h.n_ctx_train);
    std::printf("RoPE:          %s, base %g, %d dims, scale %g\n", h.rope_mode == RopeMode::kNeox ? "NeoX" : "normal",
                h.rope_freq_base, h.n_rot, h.rope_freq_scale);
    std::printf("RMSNorm eps:   %g\n", h.rms_eps);
    std::printf("output:        %s\n", h.tied_output ? "tied to token_embd" : "separate output.weight");
  } else if (!f.architecture().empty()) {
    std::printf("model:         not runnable by specflash: %s\n", hp.status().message().c_str());
  }

  std::map<std::string, std::pair<int, uint64_t>> by_type;
  uint64_t total = 0, params = 0;
  for (const auto& t : f.tensors()) {
    auto& e = by_type[type_name(t.type)];
    e.first++;
    e.second += t.n_bytes;
    total += t.n_bytes;
    params += static_cast<uint64_t>(t.n_elements());
  }
  std::printf("tensors:       %zu, %.2f M parameters, %.2f MiB of weights\n", f.tensors().size(), params / 1e6,
              total / 1048576.0);
  for (const auto& [name, e] : by_type)
    std::printf("  %-6s %5d tensors  %10.2f MiB\n", name.c_str(), e.first, e.second / 1048576.0);

  std::printf("metadata (%zu keys):\n", f.metadata().size());
  for (const auto& [key, value] : f.metadata())
    std::printf("  %-40s %s\n", key.c_str(), value.to_display_string().c_str());

  if (list_tensors) {
    std::printf("tensors:\n");
    for (const auto& t : f.tensors()) {
      std::string shape;
      for (auto d : t.dims) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
      std::printf("  %-32s %-5s %-20s offset %llu\n", t.name.c_str(), type_name(t.type), shape.c_str(),
                  static_cast<unsigned long long>(t.file_offset));
    }
  }
  return 0;
}

}  // namespace sf::cli
