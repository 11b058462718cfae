// specflash dump: the JSONL format of shared/reference (tokens, top-k logits per prompt
// position, full last-position logits, greedy continuation), so any model can be compared
// with llama.cpp's outputs.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/datasets.h"
#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/session_flags.h"
#include "engine/session.h"

namespace sf::cli {
namespace {

// Replaces invalid UTF-8 sequences with U+FFFD, as the reference dumps do.
std::string sanitize_utf8(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    for (int k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (valid) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::vector<std::pair<int32_t, float>> top_k(const float* logits, int n_vocab, int k) {
  std::vector<std::pair<int32_t, float>> v(n_vocab);
  for (int i = 0; i < n_vocab; ++i) v[i] = {i, logits[i]};
  k = std::min(k, n_vocab);
  std::partial_sort(v.begin(), v.begin() + k, v.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  v.resize(k);
  return v;
}

}  // namespace

int dump_command(int argc, char** argv) {
  CLI::App app{
      "Write llama.cpp-comparable JSONL: per prompt, its tokens, top-k logits at every position, the full "
      "last-position logits and a greedy continuation.",
      "specflash dump"};
  show_defaults_in_help(app);
  SessionFlags session_flags;
  std::string prompts_path, out_path;
  int n_gen = 32, k = 8;
  session_flags.add_to(app, /*model_required=*/true);
  app.add_option("--prompts", prompts_path, "prompt file, one prompt per line (\\n = newline)")->required();
  app.add_option("--n-gen", n_gen, "greedy tokens to generate per prompt")->check(CLI::Range(0, 1 << 20));
  app.add_option("--top-k", k, "logits to keep per prompt position")->check(CLI::Range(1, 1 << 24));
  app.add_option("-o,--output", out_path, "output file (default: stdout)");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;

  std::ifstream prompts(prompts_path);
  if (!prompts) return fail(prompts_path + ": cannot open prompt file");
  auto options = session_flags.to_options();
  if (!options.ok()) return usage_error(options.status());
  session_flags.print_notes();
  auto session = create_session_with_progress(*options);
  if (!session.ok()) return fail(session.status());
  Session& s = **session;
  const int n_vocab = s.model().hparams().n_vocab;

  FILE* out = stdout;
  if (!out_path.empty() && !(out = std::fopen(out_path.c_str(), "w")))
    return fail(out_path + ": cannot write: " + std::strerror(errno));
  const std::string out_name = out_path.empty() ? "stdout" : out_path;
  // Closes the output on every return; the checked close is the success path's.
  auto close_out = [&] {
    if (out != stdout && out != nullptr) std::fclose(out);
    out = nullptr;
  };
  std::string line;
  int index = 0;
  while (std::getline(prompts, line)) {
    if (line.empty()) continue;
    ++index;
    const std::string prompt = bench::unescape_prompt_line(line);
    auto tokens = s.tokenize(prompt, /*parse_special=*/true);
    if (!tokens.ok()) return fail(tokens.status().with_context("prompt " + std::to_string(index)));
    if (static_cast<int>(tokens->size()) + n_gen > s.n_ctx())
      return fail(
          Status::Errorf("prompt %d: %zu prompt tokens + %d generated exceed the context of %d (use --ctx-size)", index,
                         tokens->size(), n_gen, s.n_ctx()));
    s.reset();
    std::vector<float> logits;
    if (Status st = s.evaluate(*tokens, /*all_rows=*/true, &logits); !st.ok()) return fail(st);

    nlohmann::json topk = nlohmann::json::array();
    for (size_t row = 0; row < tokens->size(); ++row) {
      nlohmann::json entries = nlohmann::json::array();
      for (const auto& [id, value] : top_k(logits.data() + row * n_vocab, n_vocab, k)) entries.push_back({id, value});
      topk.push_back(std::move(entries));
    }
    const float* last = logits.data() + (tokens->size() - 1) * n_vocab;
    std::vector<float> last_logits(last, last + n_vocab);

    std::vector<int32_t> greedy;
    std::vector<float> step(last_logits);
    for (int i = 0; i < n_gen; ++i) {
      const int32_t next = argmax(step.data(), n_vocab);
      greedy.push_back(next);
      if (i + 1 == n_gen) break;
      if (Status st = s.evaluate({next}, false, &step); !st.ok()) return fail(st);
    }
    std::string text;
    for (int32_t id : greedy) text += s.tokenizer().token_to_piece(id);

    nlohmann::json record = {{"prompt", prompt},           {"tokens", *tokens}, {"topk", topk},
                             {"last_logits", last_logits}, {"greedy", greedy},  {"greedy_text", sanitize_utf8(text)}};
    const std::string serialized = record.dump();
    if (Status st = write_checked(out, serialized + "\n", out_name); !st.ok()) {
      close_out();
      return fail(st);
    }
    std::fprintf(stderr, "dump: prompt %d done (%zu tokens, %d generated)\n", index, tokens->size(), n_gen);
  }
  const Status st = out == stdout ? finish_stdout() : close_checked(out, out_path);
  return st.ok() ? 0 : fail(st);
}

}  // namespace sf::cli
