// One loader per file format in shared/datasets. Each returns every prompt of its file in
// file order; datasets.cc maps dataset names to (loader, file) and does the selection.
// Errors name the file and, for JSONL, the line.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/datasets.h"

namespace sf::bench {

// The whole file; a name ending in .gz is decompressed with the system's `gzip -dc` (gzip
// is part of every Debian base system, and zlib is not among the project's dependencies).
Result<std::string> read_text_file(const std::string& path);

// Spec-Bench and MT-Bench: {"question_id", "category", "turns": [str, ...]}. The benchmark
// is single-turn, so the prompt is the first turn.
Result<std::vector<Prompt>> load_turns_jsonl(const std::string& path, const std::string& dataset);
// HumanEval: {"task_id", "prompt"}: the function signature and docstring to complete.
Result<std::vector<Prompt>> load_human_eval(const std::string& path);
// GSM8K: {"question", "answer"}; the id is the 0-based line number (the file has none).
Result<std::vector<Prompt>> load_gsm8k(const std::string& path);
// MBPP: {"task_id", "text"}: the task description.
Result<std::vector<Prompt>> load_mbpp(const std::string& path);
// TinyStories: stories separated by "<|endoftext|>" lines. The prompt is a story's first
// sentence, which a story model continues naturally; a leading fragment (the sample files
// start mid-story) is skipped.
Result<std::vector<Prompt>> load_tinystories(const std::string& path);

}  // namespace sf::bench
