// specflash info: architecture, sizes, weight types and metadata of a GGUF file, as text or
// (--json) as one JSON object for scripts.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "model/stored_layout.h"

namespace sf::cli {
namespace {

int count_row_panel_tensors(const gguf::GgufFile& f) {
  int n = 0;
  for (const auto& t : f.tensors()) n += is_row_panel_tensor_name(t.name) ? 1 : 0;
  return n;
}

nlohmann::ordered_json info_json(const std::string& path, const gguf::GgufFile& f, const Result<ModelHParams>& hp,
                                 bool list_tensors) {
  nlohmann::ordered_json j = {
      {"file", path}, {"gguf_version", f.version()}, {"size_bytes", f.file_size()}, {"architecture", f.architecture()}};
  if (hp.ok()) {
    const ModelHParams& h = hp.value();
    j["runnable"] = true;
    j["hparams"] = {{"n_vocab", h.n_vocab},
                    {"n_layer", h.n_layer},
                    {"n_embd", h.n_embd},
                    {"n_head", h.n_head},
                    {"n_head_kv", h.n_head_kv},
                    {"head_dim", h.head_dim},
                    {"n_ff", h.n_ff},
                    {"n_ctx_train", h.n_ctx_train},
                    {"rope_neox", h.rope_mode == RopeMode::kNeox},
                    {"rope_freq_base", h.rope_freq_base},
                    {"n_rot", h.n_rot},
                    {"rope_freq_scale", h.rope_freq_scale},
                    {"rms_eps", h.rms_eps},
                    {"tied_output", h.tied_output}};
  } else {
    j["runnable"] = false;
    j["not_runnable_reason"] = hp.status().message();
  }
  nlohmann::ordered_json types = nlohmann::ordered_json::object();
  uint64_t total = 0, params = 0;
  for (const auto& t : f.tensors()) {
    auto& e = types[type_name(t.type)];
    if (e.is_null()) e = {{"tensors", 0}, {"bytes", 0}};
    e["tensors"] = e["tensors"].get<int>() + 1;
    e["bytes"] = e["bytes"].get<uint64_t>() + t.n_bytes;
    total += t.n_bytes;
    params += static_cast<uint64_t>(t.n_elements());
  }
  j["n_tensors"] = f.tensors().size();
  j["row_panel_tensors"] = count_row_panel_tensors(f);
  j["n_params"] = params;
  j["weight_bytes"] = total;
  j["types"] = types;
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  for (const auto& [key, value] : f.metadata()) meta[key] = value.to_display_string();
  j["metadata"] = meta;
  if (list_tensors) {
    nlohmann::ordered_json ts = nlohmann::ordered_json::array();
    for (const auto& t : f.tensors())
      ts.push_back({{"name", t.name}, {"type", type_name(t.type)}, {"dims", t.dims}, {"offset", t.file_offset}});
    j["tensors"] = ts;
  }
  return j;
}

void print_info_text(const std::string& path, const gguf::GgufFile& f, const Result<ModelHParams>& hp,
                     bool list_tensors) {
  std::printf("file:          %s\n", path.c_str());
  std::printf("GGUF version:  %u\n", f.version());
  std::printf("size:          %.2f MiB\n", f.file_size() / 1048576.0);
  std::printf("architecture:  %s\n",
              f.architecture().empty() ? "(none: vocabulary-only file?)" : f.architecture().c_str());
  if (hp.ok()) {
    const ModelHParams& h = hp.value();
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
  if (const int panels = count_row_panel_tensors(f); panels > 0)
    std::printf("layout:        %d matrices stored as row panels (specflash pack --row-panels; specflash only)\n",
                panels);
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
}

}  // namespace

int info_command(int argc, char** argv) {
  CLI::App app{"Print a GGUF file's architecture, hyper-parameters, weight types and metadata.", "specflash info"};
  show_defaults_in_help(app);
  std::string path, model_flag;
  bool list_tensors = false, json = false;
  auto* positional = app.add_option("model", path, "GGUF file (or -m FILE, like the other commands)");
  auto* m = app.add_option("-m,--model", model_flag, "GGUF file");
  m->excludes(positional);
  app.add_flag("--tensors", list_tensors, "list every tensor with its type, shape and offset");
  app.add_flag("--json", json, "print one JSON object instead of text");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  if (!model_flag.empty()) path = model_flag;
  if (path.empty())
    return usage_error("give the GGUF file: specflash info -m MODEL.gguf (see 'specflash info --help')");

  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) return fail(file.status());
  const auto hp = read_hparams(*file);
  if (json) {
    const Status st = write_checked(
        stdout,
        info_json(path, *file, hp, list_tensors).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
            "\n",
        "stdout");
    if (!st.ok()) return fail(st);
  } else {
    print_info_text(path, *file, hp, list_tensors);
  }
  const Status st = finish_stdout();
  return st.ok() ? 0 : fail(st);
}

}  // namespace sf::cli
