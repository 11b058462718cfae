#include "bench/datasets.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/dataset_formats.h"

namespace sf::bench {
namespace {

struct DatasetEntry {
  const char* name;
  const char* file;  // relative to the data dir
  Result<std::vector<Prompt>> (*load)(const std::string& path);
};

const DatasetEntry kDatasets[] = {
    {"spec_bench", "spec_bench/question.jsonl", [](const std::string& p) { return load_turns_jsonl(p, "spec_bench"); }},
    {"mt_bench", "mt_bench/question.jsonl", [](const std::string& p) { return load_turns_jsonl(p, "mt_bench"); }},
    {"human_eval", "human_eval/HumanEval.jsonl.gz", load_human_eval},
    {"gsm8k", "gsm8k/test.jsonl", load_gsm8k},
    {"mbpp", "mbpp/mbpp.jsonl", load_mbpp},
    {"tinystories", "tinystories/validation_100.txt", load_tinystories},
};

const DatasetEntry* find_dataset(std::string_view name) {
  for (const auto& d : kDatasets)
    if (name == d.name) return &d;
  return nullptr;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string unescape_prompt_line(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += line[i];
    }
  }
  return out;
}

std::string DatasetSpec::to_string() const {
  std::string s = name;
  if (!category.empty()) s += "/" + category;
  if (count > 0) s += ":" + std::to_string(count);
  return s;
}

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& d : kDatasets) v.push_back(d.name);
    return v;
  }();
  return names;
}

Result<DatasetSpec> parse_dataset_spec(std::string_view text) {
  DatasetSpec spec;
  std::string_view head = text;
  if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    const std::string_view n = text.substr(colon + 1);
    const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), spec.count);
    if (n.empty() || ec != std::errc() || ptr != n.data() + n.size() || spec.count <= 0)
      return Status::Error("dataset '" + std::string(text) + "': the count after ':' must be a positive integer");
    head = text.substr(0, colon);
  }
  if (const size_t slash = head.find('/'); slash != std::string_view::npos) {
    spec.category = std::string(head.substr(slash + 1));
    head = head.substr(0, slash);
    if (spec.category.empty()) return Status::Error("dataset '" + std::string(text) + "': empty category after '/'");
  }
  spec.name = std::string(head);
  if (!find_dataset(spec.name))
    return Status::Error("unknown dataset '" + spec.name + "' (known: " + join(dataset_names()) + ")");
  return spec;
}

Result<std::vector<DatasetSpec>> parse_dataset_specs(const std::vector<std::string>& values) {
  std::vector<DatasetSpec> specs;
  for (const auto& value : values) {
    size_t pos = 0;
    while (pos <= value.size()) {
      size_t comma = value.find(',', pos);
      if (comma == std::string::npos) comma = value.size();
      const std::string item = value.substr(pos, comma - pos);
      if (item.empty()) return Status::Error("empty dataset name in '" + value + "'");
      SF_ASSIGN_OR_RETURN(DatasetSpec spec, parse_dataset_spec(item));
      specs.push_back(std::move(spec));
      pos = comma + 1;
    }
  }
  return specs;
}

Result<std::vector<Prompt>> load_dataset(const std::string& data_dir, const std::string& name) {
  const DatasetEntry* d = find_dataset(name);
  if (!d) return Status::Error("unknown dataset '" + name + "' (known: " + join(dataset_names()) + ")");
  if (data_dir.empty())
    return Status::Error("cannot find the datasets folder (shared/datasets); give it with --data-dir");
  return d->load(data_dir + "/" + d->file);
}

Result<std::vector<Prompt>> select_prompts(const std::vector<Prompt>& all, const DatasetSpec& spec) {
  // Categories in order of first appearance, each with its prompts in file order.
  std::vector<std::string> categories;
  std::vector<std::vector<const Prompt*>> members;
  for (const auto& p : all) {
    size_t c = 0;
    while (c < categories.size() && categories[c] != p.category) ++c;
    if (c == categories.size()) {
      categories.push_back(p.category);
      members.emplace_back();
    }
    members[c].push_back(&p);
  }
  std::vector<Prompt> out;
  const size_t limit = spec.count > 0 ? static_cast<size_t>(spec.count) : all.size();
  if (!spec.category.empty()) {
    size_t c = 0;
    while (c < categories.size() && categories[c] != spec.category) ++c;
    if (c == categories.size())
      return Status::Error("dataset " + spec.name + " has no category '" + spec.category +
                           "' (categories: " + join(categories) + ")");
    for (size_t i = 0; i < members[c].size() && out.size() < limit; ++i) out.push_back(*members[c][i]);
    return out;
  }
  // Round-robin: the i-th prompt of every category before the (i+1)-th of any.
  for (size_t i = 0; out.size() < limit; ++i) {
    bool any = false;
    for (size_t c = 0; c < members.size() && out.size() < limit; ++c) {
      if (i >= members[c].size()) continue;
      out.push_back(*members[c][i]);
      any = true;
    }
    if (!any) break;
  }
  return out;
}

Result<std::vector<Prompt>> load_prompt_file(const std::string& path) {
  SF_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  const bool jsonl = path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0;
  std::vector<Prompt> out;
  size_t pos = 0;
  for (int line_no = 1; pos < text.size(); ++line_no) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    Prompt p;
    p.dataset = p.category = "file";
    p.id = "file/" + std::to_string(out.size());
    if (jsonl) {
      const nlohmann::json obj = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      const char* key = obj.is_object() ? (obj.contains("text") ? "text" : "prompt") : nullptr;
      if (!key || !obj.contains(key) || !obj[key].is_string())
        return Status::Errorf("%s:%d: expected an object with a string \"text\" or \"prompt\"", path.c_str(), line_no);
      p.text = obj[key].get<std::string>();
      if (obj.contains("id") && obj["id"].is_string()) p.id = obj["id"].get<std::string>();
      if (obj.contains("id") && obj["id"].is_number_integer())
        p.id = "file/" + std::to_string(obj["id"].get<long long>());
      if (obj.contains("category") && obj["category"].is_string()) p.category = obj["category"].get<std::string>();
    } else {
      p.text = unescape_prompt_line(line);
    }
    out.push_back(std::move(p));
  }
  if (out.empty()) return Status::Error(path + ": no prompts in the file");
  return out;
}

std::string default_data_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    for (const char* rel : {"shared/datasets", "datasets"}) {
      const auto candidate = dir / rel;
      if (std::filesystem::exists(candidate / "spec_bench", ec)) return candidate.string();
    }
  }
  return "";
}

}  // namespace sf::bench
