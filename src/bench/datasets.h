// Benchmark prompts: the datasets in shared/datasets (Spec-Bench, MT-Bench, HumanEval,
// MBPP, GSM8K, TinyStories), chosen by specs like "spec_bench:16", "spec_bench/qa:8" or
// "gsm8k", and custom prompt files.
//
// Selection is deterministic so two runs (or two machines) measure the same prompts: the
// first N in file order, or, for a dataset with several categories and no category filter,
// round-robin over the categories in order of first appearance (stratified), so a small N
// still covers every kind of task.
//
// All functions are pure apart from reading files; errors are Status values whose message
// names the file or the bad spec.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sf::bench {

struct Prompt {
  std::string id;        // stable within its dataset: "spec_bench/81", "HumanEval/0"
  std::string dataset;   // "spec_bench", ..., or "file" for --prompt-file
  std::string category;  // the dataset's own category, else the dataset name
  std::string text;      // the raw prompt (no chat template applied)
};

// "NAME[/CATEGORY][:N]"; count 0 means every prompt.
struct DatasetSpec {
  std::string name;
  std::string category;
  int count = 0;
  std::string to_string() const;
};

// The dataset names load_dataset knows, in a fixed order (for help and error messages).
const std::vector<std::string>& dataset_names();

// Parses one spec; error for an unknown name or a bad count.
Result<DatasetSpec> parse_dataset_spec(std::string_view text);
// Parses repeatable flag values that may each hold a comma-separated list.
Result<std::vector<DatasetSpec>> parse_dataset_specs(const std::vector<std::string>& values);

// Every prompt of dataset `name`, in file order, from `data_dir` (shared/datasets).
// Error when a file is missing or malformed.
Result<std::vector<Prompt>> load_dataset(const std::string& data_dir, const std::string& name);

// Applies a spec's category filter and count to a loaded dataset (see the header comment).
// Error when the category does not exist (the message lists the ones that do).
Result<std::vector<Prompt>> select_prompts(const std::vector<Prompt>& all, const DatasetSpec& spec);

// Custom prompts. A .jsonl file holds one object per line with "text" (or "prompt") and
// optional "id" and "category"; any other file holds one prompt per non-empty line, where
// the two characters "\n" stand for a newline (as in shared/reference/prompts-*.txt).
Result<std::vector<Prompt>> load_prompt_file(const std::string& path);

// shared/datasets found by walking up from the executable's folder (like the embedded
// model), else "" when there is none.
std::string default_data_dir();

// Prompt files hold one prompt per line; a literal backslash-n inside a line is a newline.
std::string unescape_prompt_line(const std::string& line);

}  // namespace sf::bench
