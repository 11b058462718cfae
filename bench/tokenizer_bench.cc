// tokenizer_bench: encode throughput (MB/s of UTF-8 input) of each vocabulary in
// ../shared/vocab on the datasets in ../shared/datasets. Two modes per pair:
//   prompts - every prompt/turn/story encoded by its own call (how the engine uses it);
//   corpus  - the whole dataset joined into one text, encoded by one call.
// Prints a table to stdout and, with --json FILE, the same numbers as JSON. Never fails on
// time; exits non-zero only when inputs are missing or an encode fails.
//
// usage: tokenizer_bench [--shared DIR] [--vocab NAME[,NAME...]] [--min-seconds S] [--json FILE]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Dataset {
  std::string name;
  std::vector<std::string> texts;
  size_t bytes = 0;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// HumanEval ships gzipped; gzip is everywhere, a zlib dependency is not worth it here.
std::string read_gzip(const std::string& path) {
  std::string out;
  FILE* p = popen(("gzip -dc '" + path + "' 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

void add_jsonl(Dataset& d, const std::string& content, const std::vector<std::string>& fields) {
  std::istringstream in(content);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;
    for (const std::string& f : fields) {
      if (!j.contains(f)) continue;
      if (j[f].is_string()) {
        d.texts.push_back(j[f].get<std::string>());
      } else if (j[f].is_array()) {
        for (const auto& t : j[f]) {
          if (t.is_string()) d.texts.push_back(t.get<std::string>());
        }
      }
    }
  }
}

std::vector<Dataset> load_datasets(const std::string& shared) {
  const std::string dir = shared + "/datasets/";
  std::vector<Dataset> sets;
  auto add = [&](Dataset d) {
    for (const auto& t : d.texts) d.bytes += t.size();
    if (!d.texts.empty()) sets.push_back(std::move(d));
  };
  {
    Dataset d{"spec_bench", {}, 0};
    add_jsonl(d, read_all(dir + "spec_bench/question.jsonl"), {"turns"});
    add(std::move(d));
  }
  {
    Dataset d{"mt_bench", {}, 0};
    add_jsonl(d, read_all(dir + "mt_bench/question.jsonl"), {"turns"});
    add(std::move(d));
  }
  {
    Dataset d{"human_eval", {}, 0};
    add_jsonl(d, read_gzip(dir + "human_eval/HumanEval.jsonl.gz"), {"prompt", "canonical_solution"});
    add(std::move(d));
  }
  {
    Dataset d{"mbpp", {}, 0};
    add_jsonl(d, read_all(dir + "mbpp/mbpp.jsonl"), {"text", "code"});
    add(std::move(d));
  }
  {
    Dataset d{"gsm8k", {}, 0};
    add_jsonl(d, read_all(dir + "gsm8k/test.jsonl"), {"question", "answer"});
    add(std::move(d));
  }
  {
    // One story per paragraph block.
    Dataset d{"tinystories", {}, 0};
    const std::string all = read_all(dir + "tinystories/validation_100.txt");
    std::istringstream in(all);
    std::string line, story;
    while (std::getline(in, line)) {
      if (line.empty() || line == "<|endoftext|>") {
        if (!story.empty()) d.texts.push_back(story);
        story.clear();
      } else {
        story += (story.empty() ? "" : "\n") + line;
      }
    }
    if (!story.empty()) d.texts.push_back(story);
    add(std::move(d));
  }
  return sets;
}

// ../shared beside the repository this file was compiled from (benchmarks get no
// configure-time definitions); $SPECFLASH_SHARED or --shared override it.
std::string default_shared_dir() {
  if (const char* env = std::getenv("SPECFLASH_SHARED")) return env;
  return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "shared").string();
}

struct Measurement {
  double mb_per_s = 0;
  size_t tokens = 0;
  double bytes_per_token = 0;
};

// Repeats fn until min_seconds have passed (at least twice) and reports the best round,
// which is the least disturbed by other processes on a shared machine.
template <typename Fn>
Measurement measure(size_t bytes, double min_seconds, Fn&& fn) {
  double best = 1e30;
  size_t tokens = 0;
  const auto start = Clock::now();
  for (int round = 0;; ++round) {
    const auto t0 = Clock::now();
    tokens = fn();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, dt);
    if (round >= 1 && std::chrono::duration<double>(Clock::now() - start).count() >= min_seconds) break;
  }
  return {bytes / 1e6 / best, tokens, tokens ? static_cast<double>(bytes) / tokens : 0.0};
}

}  // namespace

int main(int argc, char** argv) {
  std::string shared = default_shared_dir();
  std::string json_path;
  std::vector<std::string> vocabs = {"llama-spm",    "phi-3",          "gpt-2", "falcon",  "starcoder",
                                     "deepseek-llm", "deepseek-coder", "mpt",   "bert-bge"};
  double min_seconds = 0.3;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--shared")) {
      shared = next();
    } else if (!std::strcmp(argv[i], "--json")) {
      json_path = next();
    } else if (!std::strcmp(argv[i], "--min-seconds")) {
      min_seconds = std::atof(next().c_str());
    } else if (!std::strcmp(argv[i], "--vocab")) {
      vocabs.clear();
      std::istringstream list(next());
      for (std::string v; std::getline(list, v, ',');) vocabs.push_back(v);
    } else {
      std::fprintf(stderr, "usage: %s [--shared DIR] [--vocab A,B] [--min-seconds S] [--json FILE]\n", argv[0]);
      return 2;
    }
  }

  const auto datasets = load_datasets(shared);
  if (datasets.empty()) {
    std::fprintf(stderr, "error: no datasets found under %s/datasets\n", shared.c_str());
    return 1;
  }
  nlohmann::json report = nlohmann::json::array();
  std::printf("%-15s %-12s %9s %8s %12s %12s %9s\n", "vocab", "dataset", "texts", "MB", "prompts MB/s", "corpus MB/s",
              "B/token");
  for (const std::string& name : vocabs) {
    const std::string path = shared + "/vocab/ggml-vocab-" + name + ".gguf";
    if (!std::filesystem::exists(path)) {
      std::fprintf(stderr, "skipping %s: %s absent\n", name.c_str(), path.c_str());
      continue;
    }
    auto file = sf::gguf::GgufFile::open(path);
    if (!file.ok()) {
      std::fprintf(stderr, "error: %s\n", file.status().message().c_str());
      return 1;
    }
    const auto load_start = Clock::now();
    auto tok = sf::Tokenizer::from_gguf(*file);
    if (!tok.ok()) {
      std::fprintf(stderr, "error: %s\n", tok.status().message().c_str());
      return 1;
    }
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();
    bool failed = false;
    for (const Dataset& d : datasets) {
      const Measurement per_prompt = measure(d.bytes, min_seconds, [&] {
        size_t n = 0;
        for (const std::string& t : d.texts) {
          auto ids = tok->encode(t, true, false);
          if (!ids.ok()) {
            failed = true;
            return n;
          }
          n += ids->size();
        }
        return n;
      });
      std::string corpus;
      for (const std::string& t : d.texts) corpus += t + "\n\n";
      const Measurement whole = measure(corpus.size(), min_seconds, [&] {
        auto ids = tok->encode(corpus, true, false);
        if (!ids.ok()) failed = true;
        return ids.ok() ? ids->size() : size_t{0};
      });
      if (failed) {
        std::fprintf(stderr, "error: encode failed for %s on %s\n", name.c_str(), d.name.c_str());
        return 1;
      }
      std::printf("%-15s %-12s %9zu %8.2f %12.2f %12.2f %9.2f\n", name.c_str(), d.name.c_str(), d.texts.size(),
                  d.bytes / 1e6, per_prompt.mb_per_s, whole.mb_per_s, per_prompt.bytes_per_token);
      report.push_back({{"vocab", name},
                        {"type", sf::vocab_type_name(tok->type())},
                        {"dataset", d.name},
                        {"texts", d.texts.size()},
                        {"bytes", d.bytes},
                        {"tokens", per_prompt.tokens},
                        {"prompts_mb_per_s", per_prompt.mb_per_s},
                        {"corpus_mb_per_s", whole.mb_per_s},
                        {"load_ms", load_ms}});
    }
    std::fflush(stdout);
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << report.dump(2) << "\n";
  }
  return 0;
}
