// distill_bench: how well drafts predict a target under greedy chain speculation.
//
//   distill_bench --target T.gguf --draft NAME=D.gguf [--draft ...] [--truncate N]
//                 [--prompts FILE --n-prompts 16 --n-gen 64 --gammas 2,4,6 --threads N]
//
// For every draft and gamma it decodes --n-gen tokens greedily from each prompt and prints
// the mean accepted length (tokens committed per target pass, bonus token included), the
// draft cost per drafted token and decode tokens/s, as a Markdown table and JSON lines.
// --truncate N also writes and measures the target's first N layers as a draft (a GGUF
// copy with llama.block_count = N and only blk.<i> for i < N). Prompts: the first sentence
// of the LAST --n-prompts stories of FILE (default: TinyStories validation_100.txt, whose
// last 20 stories the documented distill recipe holds out).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/session.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "train/distill.h"

namespace {

struct DraftSpec {
  std::string name, path;
};

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    out.push_back(std::atoi(s.substr(pos, end - pos).c_str()));
    pos = end + 1;
  }
  return out;
}

sf::Status write_truncated(const std::string& target, int n_layers, const std::string& out) {
  SF_ASSIGN_OR_RETURN(sf::gguf::GgufFile f, sf::gguf::GgufFile::open(target));
  sf::gguf::GgufWriter w;
  w.copy_metadata_from(f);
  w.set(f.architecture() + ".block_count", sf::gguf::Value::u32(static_cast<uint32_t>(n_layers)));
  for (const auto& t : f.tensors()) {
    if (t.name.rfind("blk.", 0) == 0 && std::atoi(t.name.c_str() + 4) >= n_layers) continue;
    SF_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, f.read_tensor_data(t));
    w.add_tensor(t.name, t.type, t.dims, std::move(bytes));
  }
  return w.write(out);
}

int usage() {
  std::fprintf(stderr,
               "usage: distill_bench --target T.gguf [--draft NAME=D.gguf ...] [--truncate N] [--prompts FILE]\n"
               "                     [--n-prompts 16] [--n-gen 64] [--gammas 2,4,6] [--threads N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string target, prompts_path = "../shared/datasets/tinystories/validation_100.txt";
  std::vector<DraftSpec> drafts;
  int truncate = 0, n_prompts = 16, n_gen = 64, threads = 0;
  std::vector<int> gammas = {2, 4, 6};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string v = argv[++i];
    if (a == "--target") {
      target = v;
    } else if (a == "--draft") {
      const size_t eq = v.find('=');
      drafts.push_back(eq == std::string::npos ? DraftSpec{v, v} : DraftSpec{v.substr(0, eq), v.substr(eq + 1)});
    } else if (a == "--truncate") {
      truncate = std::atoi(v.c_str());
    } else if (a == "--prompts") {
      prompts_path = v;
    } else if (a == "--n-prompts") {
      n_prompts = std::atoi(v.c_str());
    } else if (a == "--n-gen") {
      n_gen = std::atoi(v.c_str());
    } else if (a == "--gammas") {
      gammas = parse_ints(v);
    } else if (a == "--threads") {
      threads = std::atoi(v.c_str());
    } else {
      return usage();
    }
  }
  if (target.empty()) return usage();
  if (truncate > 0) {
    const std::string out = "/tmp/distill_bench_first" + std::to_string(truncate) + ".gguf";
    const sf::Status st = write_truncated(target, truncate, out);
    if (!st.ok()) {
      std::fprintf(stderr, "error: %s\n", st.message().c_str());
      return 1;
    }
    drafts.push_back({"first-" + std::to_string(truncate) + "-layers", out});
  }
  auto stories = sf::train::read_stories({prompts_path});
  if (!stories.ok()) {
    std::fprintf(stderr, "error: %s\n", stories.status().message().c_str());
    return 1;
  }
  std::vector<std::string> prompts;
  for (size_t i = stories->size() - std::min<size_t>(stories->size(), n_prompts); i < stories->size(); ++i) {
    const std::string& s = (*stories)[i];
    const size_t dot = s.find_first_of(".!?");
    prompts.push_back(s.substr(0, dot == std::string::npos ? std::min<size_t>(s.size(), 80) : dot + 1));
  }

  sf::SamplingParams greedy;
  greedy.temperature = 0;
  std::printf("| draft | gamma | mean accepted length | draft ms / drafted token | decode tok/s |\n");
  std::printf("|---|---|---|---|---|\n");
  std::vector<std::string> json;
  // Plain decoding as the reference speed.
  {
    sf::SessionOptions so;
    so.model_path = target;
    so.n_threads = threads;
    auto session = sf::Session::create(so);
    if (!session.ok()) {
      std::fprintf(stderr, "error: %s\n", session.status().message().c_str());
      return 1;
    }
    double secs = 0;
    int toks = 0;
    for (const auto& p : prompts) {
      auto ids = (*session)->tokenize(p);
      auto st = (*session)->generate(*ids, n_gen, greedy, true, [](int32_t, const std::string&) { return true; });
      if (!st.ok()) return 1;
      secs += st->decode_seconds;
      toks += st->decode_tokens();
    }
    std::printf("| (none: plain decoding) | - | 1.00 | - | %.0f |\n", toks / secs);
  }
  for (const auto& d : drafts) {
    for (int gamma : gammas) {
      sf::SessionOptions so;
      so.model_path = target;
      so.n_threads = threads;
      so.spec.method = sf::SpecConfig::Method::kChain;
      so.spec.draft_model_path = d.path;
      so.spec.draft_len = gamma;
      auto session = sf::Session::create(so);
      if (!session.ok()) {
        std::fprintf(stderr, "error: %s: %s\n", d.name.c_str(), session.status().message().c_str());
        return 1;
      }
      uint64_t cycles = 0, accepted = 0, drafted = 0;
      double draft_s = 0, decode_s = 0;
      int toks = 0;
      for (const auto& p : prompts) {
        auto ids = (*session)->tokenize(p);
        auto st = (*session)->generate(*ids, n_gen, greedy, true, [](int32_t, const std::string&) { return true; });
        if (!st.ok()) {
          std::fprintf(stderr, "error: %s\n", st.status().message().c_str());
          return 1;
        }
        cycles += st->spec.cycles;
        accepted += st->spec.accepted_draft_tokens;
        drafted += st->spec.draft_tokens;
        draft_s += st->spec.draft_seconds;
        decode_s += st->decode_seconds;
        toks += st->decode_tokens();
      }
      const double mal = cycles ? static_cast<double>(accepted + cycles) / cycles : 1.0;
      const double ms_per = drafted ? 1000.0 * draft_s / drafted : 0.0;
      std::printf("| %s | %d | %.2f | %.4f | %.0f |\n", d.name.c_str(), gamma, mal, ms_per, toks / decode_s);
      char buf[512];
      std::snprintf(buf, sizeof(buf),
                    "{\"draft\":\"%s\",\"gamma\":%d,\"mean_accepted\":%.4f,\"draft_ms_per_token\":%.5f,"
                    "\"decode_tok_s\":%.1f,\"cycles\":%llu,\"prompts\":%zu,\"n_gen\":%d}",
                    d.name.c_str(), gamma, mal, ms_per, toks / decode_s, static_cast<unsigned long long>(cycles),
                    prompts.size(), n_gen);
      json.push_back(buf);
    }
  }
  std::printf("\n");
  for (const auto& j : json) std::printf("%s\n", j.c_str());
  return 0;
}
