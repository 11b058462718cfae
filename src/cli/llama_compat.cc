#include "cli/llama_compat.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace sf::cli {
namespace {

// llama.cpp's multi-letter single-dash spellings and the long names specflash uses for
// them (the GPU-only ones are registered by GpuOnlyFlags under these long names).
const std::map<std::string, std::string>& llama_spellings() {
  static const std::map<std::string, std::string> m = {
      {"-md", "--model-draft"},     {"-ngl", "--n-gpu-layers"},    {"-ngld", "--n-gpu-layers-draft"},
      {"-fa", "--flash-attn"},      {"-sm", "--split-mode"},       {"-mg", "--main-gpu"},
      {"-ts", "--tensor-split"},    {"-dev", "--device"},          {"-devd", "--device-draft"},
      {"-nkvo", "--no-kv-offload"}, {"-cnv", "--conversation"},    {"-no-cnv", "--no-conversation"},
      {"-ctk", "--cache-type-k"},   {"-ctv", "--cache-type-v"},    {"-tb", "--threads-batch"},
      {"-ub", "--ubatch-size"},     {"-mli", "--multiline-input"}, {"-sys", "--system"},
  };
  return m;
}

bool is_number(const char* s) {
  char* end = nullptr;
  std::strtod(s, &end);
  return end != s && *end == 0;
}

// The option `word` names in app ("--x=v" counts as "--x"), or nullptr.
const CLI::Option* find_option(const CLI::App& app, const std::string& word) {
  const std::string name = word.substr(0, word.find('='));
  return app.get_option_no_throw(name);
}

}  // namespace

Result<std::vector<std::string>> normalize_llama_args(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> out;
  bool value_expected = false, only_positionals = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (only_positionals || value_expected || a.size() < 3 || a[0] != '-' || a[1] == '-' || is_number(argv[i])) {
      if (a == "--") only_positionals = true;
      // An option "--x" that takes a value makes the next word its value, whatever it looks like.
      const CLI::Option* o = !value_expected && !only_positionals && a.rfind("--", 0) == 0 && a.find('=') == a.npos
                                 ? find_option(app, a)
                                 : nullptr;
      value_expected = o != nullptr && o->get_expected_min() > 0;
      if (value_expected == false && a.size() == 2 && a[0] == '-' && !only_positionals) {
        const CLI::Option* s = find_option(app, a);
        value_expected = s != nullptr && s->get_expected_min() > 0;
      }
      out.push_back(std::move(a));
      continue;
    }
    // A single dash and two or more characters: a llama.cpp spelling, or a mistake.
    const std::string word = a.substr(0, a.find('='));
    const auto it = llama_spellings().find(word);
    if (it == llama_spellings().end() || app.get_option_no_throw(it->second) == nullptr) {
      // "-n128" style (a one-letter option glued to its value) stays allowed for numbers.
      const CLI::Option* s = app.get_option_no_throw(a.substr(0, 2));
      if (s != nullptr && s->get_expected_min() > 0 && is_number(a.c_str() + 2)) {
        out.push_back(std::move(a));
        continue;
      }
      if (word == "-cnv" || word == "-i" || word == "-if")
        return Status::Errorf(
            "unknown option '%s': for a conversation use 'specflash chat' (see 'specflash chat --help')", word.c_str());
      return Status::Errorf("unknown option '%s' (long options take two dashes; see '%s --help')", word.c_str(),
                            app.get_name().c_str());
    }
    a = it->second + a.substr(word.size());
    const CLI::Option* o = app.get_option_no_throw(it->second);
    value_expected = a.find('=') == a.npos && o->get_expected_min() > 0;
    out.push_back(std::move(a));
  }
  return out;
}

void GpuOnlyFlags::add_to(CLI::App& app) {
  const std::string group = "llama.cpp GPU options (accepted and ignored: specflash runs on the CPU)";
  auto value = [&](const char* names, const char* spelling) {
    // No bound variable: only whether it was given matters.
    options.push_back(app.add_option(names)->description(spelling)->type_name("X")->group(group));
  };
  value("--n-gpu-layers,--gpu-layers", "also -ngl");
  value("--n-gpu-layers-draft,--gpu-layers-draft", "also -ngld");
  value("--split-mode", "also -sm");
  value("--main-gpu", "also -mg");
  value("--tensor-split", "also -ts");
  value("--device", "also -dev");
  value("--device-draft", "also -devd");
  options.push_back(app.add_flag("--no-kv-offload")->description("also -nkvo")->group(group));
  // -fa: a flag in older llama.cpp, "-fa on|off|auto" in newer; take an optional value.
  options.push_back(app.add_option("--flash-attn")
                        ->description("also -fa")
                        ->expected(0, 1)
                        ->type_name("[on|off|auto]")
                        ->group(group));
}

void GpuOnlyFlags::note_ignored() const {
  for (const CLI::Option* o : options)
    if (o->count() > 0)
      std::fprintf(stderr, "note: %s does nothing in specflash (GPU only; specflash runs on the CPU)\n",
                   o->get_name().c_str());
}

}  // namespace sf::cli
