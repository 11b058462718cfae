#include "bench/bench_config.h"

#include <algorithm>
#include <charconv>

namespace sf::bench {
namespace {

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> items;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    items.push_back(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return items;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool uses_spec(const BenchConfig& c) {
  return std::any_of(c.methods.begin(), c.methods.end(),
                     [](BenchMethod m) { return m == BenchMethod::kChain || m == BenchMethod::kTree; });
}

bool has(const BenchConfig& c, BenchMethod m) {
  return std::find(c.methods.begin(), c.methods.end(), m) != c.methods.end();
}

// The speculative configuration of a chain or tree run.
SpecConfig spec_for(const BenchConfig& c, BenchMethod m) {
  SpecConfig spec;
  spec.method = m == BenchMethod::kChain ? SpecConfig::Method::kChain : SpecConfig::Method::kTree;
  spec.draft_model_path = c.draft_model_path;
  spec.draft_len = c.draft_len;
  if (m == BenchMethod::kTree && !c.tree_widths.empty()) {
    spec.tree_widths = c.tree_widths;
    spec.draft_len = static_cast<int>(c.tree_widths.size());  // the widths fix the depth
  }
  return spec;
}

}  // namespace

const char* method_name(BenchMethod m) {
  switch (m) {
    case BenchMethod::kAr:
      return "ar";
    case BenchMethod::kFlashAr:
      return "flash-ar";
    case BenchMethod::kChain:
      return "chain";
    case BenchMethod::kTree:
      return "tree";
  }
  return "?";
}

Result<std::vector<BenchMethod>> parse_methods(std::string_view text) {
  static const BenchMethod kAll[] = {BenchMethod::kAr, BenchMethod::kFlashAr, BenchMethod::kChain, BenchMethod::kTree};
  std::vector<BenchMethod> methods;
  for (std::string_view item : split_commas(text)) {
    item = trim(item);
    const BenchMethod* found = nullptr;
    for (const BenchMethod& m : kAll)
      if (item == method_name(m)) found = &m;
    if (!found) return Status::Error("unknown method '" + std::string(item) + "' (known: ar, flash-ar, chain, tree)");
    if (std::find(methods.begin(), methods.end(), *found) == methods.end()) methods.push_back(*found);
  }
  return methods;
}

Result<std::vector<BenchBudget>> parse_budgets(std::string_view text) {
  std::vector<BenchBudget> budgets;
  for (std::string_view item : split_commas(text)) {
    item = trim(item);
    if (item.empty()) return Status::Error("empty memory budget in '" + std::string(text) + "'");
    auto parsed = MemoryBudget::parse(item);
    if (!parsed.ok()) return parsed.status().with_context("budget '" + std::string(item) + "'");
    budgets.push_back({std::string(item), *parsed});
  }
  return budgets;
}

Result<std::vector<int>> parse_tree_widths(std::string_view text) {
  std::vector<int> widths;
  for (std::string_view item : split_commas(text)) {
    item = trim(item);
    int w = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), w);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || w < 1 || w > 64)
      return Status::Error("tree widths '" + std::string(text) + "': each must be an integer in 1..64");
    widths.push_back(w);
  }
  return widths;
}

Status validate(const BenchConfig& c) {
  if (c.methods.empty()) return Status::Error("no methods to run (--methods)");
  const bool only_ar = c.methods.size() == 1 && c.methods[0] == BenchMethod::kAr;
  if (c.budgets.empty() && !only_ar) return Status::Error("no memory budgets to run at (--budgets)");
  if (c.n_predict < 1) return Status::Error("--n-predict must be at least 1");
  if (uses_spec(c) && c.draft_model_path.empty())
    return Status::Error(std::string(has(c, BenchMethod::kChain) ? "chain" : "tree") +
                         " needs a draft model (--draft FILE.gguf)");
  for (BenchMethod m : {BenchMethod::kChain, BenchMethod::kTree})
    if (has(c, m)) SF_RETURN_IF_ERROR(validate_spec_config(spec_for(c, m)));
  if (c.prompt_file.empty() && c.datasets.empty()) return Status::Error("no prompts (--dataset or --prompt-file)");
  if (c.warmup < 0) return Status::Error("--warmup must not be negative");
  return Status::Ok();
}

std::vector<BenchRunSpec> plan_runs(const BenchConfig& c, const SessionOptions& base) {
  std::vector<BenchRunSpec> runs;
  if (has(c, BenchMethod::kAr) || c.compare_to_ar) {
    BenchRunSpec ar{BenchMethod::kAr, {"resident", MemoryBudget{}}, base};
    ar.options.mem_budget = MemoryBudget{};
    ar.options.spec = SpecConfig{};
    runs.push_back(ar);
  }
  for (const BenchBudget& b : c.budgets) {
    for (BenchMethod m : {BenchMethod::kFlashAr, BenchMethod::kChain, BenchMethod::kTree}) {
      if (!has(c, m)) continue;
      BenchRunSpec run{m, b, base};
      run.options.mem_budget = b.budget;
      run.options.spec = m == BenchMethod::kFlashAr ? SpecConfig{} : spec_for(c, m);
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

int spec_context_margin(const BenchConfig& c) {
  int margin = 1;
  for (BenchMethod m : {BenchMethod::kChain, BenchMethod::kTree})
    if (has(c, m)) margin = std::max<int>(margin, tree_node_count(tree_widths(spec_for(c, m))) + 1);
  return margin;
}

}  // namespace sf::bench
