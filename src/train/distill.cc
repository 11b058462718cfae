#include "train/distill.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/session.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "train/draft_export.h"

namespace sf::train {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void split_stories(const std::string& text, std::vector<std::string>* out) {
  const std::string sep = "<|endoftext|>";
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(sep, pos);
    if (end == std::string::npos) end = text.size();
    std::string s = text.substr(pos, end - pos);
    const size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    if (a != std::string::npos) out->push_back(s.substr(a, b - a + 1));
    pos = end + sep.size();
  }
}

// Concatenates stories into a stream and cuts seq_len windows.
std::vector<int32_t> windows_of(const std::vector<std::vector<int32_t>>& stories, int seq_len) {
  std::vector<int32_t> stream;
  for (const auto& s : stories) stream.insert(stream.end(), s.begin(), s.end());
  stream.resize(stream.size() / seq_len * seq_len);
  return stream;
}

}  // namespace

// The progress lines matter: the teacher pass over a big corpus with a large target takes minutes.
Status compute_teacher_signal(Session& target, const std::vector<int32_t>& windows, int seq_len, int k,
                              TeacherData* out, bool progress, const char* what, const char* command) {
  const auto started = std::chrono::steady_clock::now();
  auto last_line = started;
  out->seq_len = seq_len;
  out->k = k;
  out->tokens = windows;
  const int64_t n_win = static_cast<int64_t>(windows.size()) / seq_len;
  const int V = target.model().hparams().n_vocab;
  out->ids.resize(windows.size() * k);
  out->logits.resize(windows.size() * k);
  out->lse.resize(windows.size());
  std::vector<float> logits;
  std::vector<int32_t> order(V);
  for (int64_t w = 0; w < n_win; ++w) {
    target.reset();
    std::vector<int32_t> toks(windows.begin() + w * seq_len, windows.begin() + (w + 1) * seq_len);
    SF_RETURN_IF_ERROR(target.evaluate(toks, true, &logits));
    const auto now = std::chrono::steady_clock::now();
    if (progress && now - last_line >= std::chrono::seconds(1)) {
      last_line = now;
      std::fprintf(stderr, "%s: teacher pass (%s): %lld/%lld windows, %.0f s\n", command, what,
                   static_cast<long long>(w + 1), static_cast<long long>(n_win),
                   std::chrono::duration<double>(now - started).count());
    }
    for (int i = 0; i < seq_len; ++i) {
      const float* row = logits.data() + static_cast<size_t>(i) * V;
      for (int v = 0; v < V; ++v) order[v] = v;
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
      double mx = row[order[0]], sum = 0;
      for (int v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
      const size_t p = static_cast<size_t>(w) * seq_len + i;
      out->lse[p] = static_cast<float>(mx + std::log(sum));
      for (int j = 0; j < k; ++j) {
        out->ids[p * k + j] = order[j];
        out->logits[p * k + j] = row[order[j]];
      }
    }
  }
  // A last line whatever the pass took: a short pass prints no periodic line, and the user
  // still learns it finished and how long it took.
  if (progress)
    std::fprintf(stderr, "%s: teacher pass (%s): %lld/%lld windows, %.1f s, done\n", command, what,
                 static_cast<long long>(n_win), static_cast<long long>(n_win),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return Status::Ok();
}

Result<std::vector<std::string>> read_stories(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file()) in_dir.push_back(e.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      return Status::Errorf("%s: no such data file or directory", p.c_str());
    }
  }
  std::vector<std::string> stories;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) return Status::Errorf("%s: cannot read", f.c_str());
    std::stringstream ss;
    ss << in.rdbuf();
    split_stories(ss.str(), &stories);
  }
  return stories;
}

Result<DistillReport> run_distill(const DistillOptions& o) {
  DistillReport report;
  if (o.target_path.empty() || o.out_path.empty()) return Status::Error("distill: --target and --out are required");
  if (o.seq_len < 2) return Status::Error("distill: --seq-len must be at least 2");
  SF_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::open(o.target_path));
  if (!file.has("tokenizer.ggml.tokens"))
    return Status::Errorf(
        "%s: the target has no vocabulary (tokenizer.ggml.tokens); a draft must share its "
        "target's vocabulary, so distill needs a target GGUF with tokenizer metadata",
        o.target_path.c_str());
  SF_ASSIGN_OR_RETURN(ModelHParams thp, read_hparams(file));
  DraftConfig c = o.draft;
  c.n_vocab = thp.n_vocab;
  c.rms_eps = thp.rms_eps;
  c.rope_freq_base = thp.rope_freq_base;
  c.n_ctx = std::max(o.seq_len, thp.n_ctx_train);
  SF_RETURN_IF_ERROR(c.validate());
  if (c.n_embd > thp.n_embd || c.n_ff > thp.n_ff || c.n_head > thp.n_head)
    return Status::Errorf(
        "distill: the draft (embd %d, ffn %d, heads %d) is wider than the target (embd %d, ffn %d, "
        "heads %d); a draft must be smaller than its target",
        c.n_embd, c.n_ff, c.n_head, thp.n_embd, thp.n_ff, thp.n_head);
  if (o.seq_len > thp.n_ctx_train)
    return Status::Errorf("distill: --seq-len %d exceeds the target's training context %d", o.seq_len, thp.n_ctx_train);
  if (o.top_k < 1 || o.top_k > thp.n_vocab) return Status::Errorf("distill: --top-k must be in [1, %d]", thp.n_vocab);

  SessionOptions so;
  so.model_path = o.target_path;
  so.n_threads = o.n_threads;
  so.n_ctx = std::max(o.seq_len, 256);
  so.max_batch = o.seq_len;
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Session> target, Session::create(so));
  const Tokenizer& tok = target->tokenizer();

  // Stories -> tokens.
  std::vector<std::string> texts;
  if (!o.data.empty()) {
    SF_ASSIGN_OR_RETURN(texts, read_stories(o.data));
  }
  std::vector<std::vector<int32_t>> train_stories, held_stories;
  const size_t n_hold = std::min<size_t>(texts.size(), static_cast<size_t>(std::max(0, o.holdout_stories)));
  for (size_t i = 0; i < texts.size(); ++i) {
    SF_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok.encode(texts[i], true, false));
    report.data_tokens += static_cast<int64_t>(ids.size());
    (i + n_hold >= texts.size() ? held_stories : train_stories).push_back(std::move(ids));
  }
  // Text sampled from the target: what the draft will see at decode time.
  SamplingParams sp;
  sp.temperature = 1.0f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  for (uint64_t i = 0; report.sampled_tokens < o.sample_tokens; ++i) {
    sp.seed = o.train.seed * 1000003ull + i;
    std::vector<int32_t> story = {tok.bos_id() >= 0 ? tok.bos_id() : 0};
    SF_ASSIGN_OR_RETURN(GenerationStats gs, target->generate(story, std::min(o.seq_len * 2, target->n_ctx() - 1), sp,
                                                             false, [&](int32_t id, const std::string&) {
                                                               story.push_back(id);
                                                               return true;
                                                             }));
    (void)gs;
    report.sampled_tokens += static_cast<int64_t>(story.size());
    train_stories.push_back(std::move(story));
  }
  std::vector<int32_t> train_win = windows_of(train_stories, o.seq_len);
  std::vector<int32_t> held_win = windows_of(held_stories, o.seq_len);
  if (o.max_train_tokens > 0 && static_cast<int64_t>(train_win.size()) > o.max_train_tokens)
    train_win.resize(o.max_train_tokens / o.seq_len * o.seq_len);
  if (n_hold == 0) {  // hold out the last 5% of the windows
    const int64_t n = static_cast<int64_t>(train_win.size()) / o.seq_len, h = n >= 2 ? std::max<int64_t>(1, n / 20) : 0;
    held_win.assign(train_win.end() - h * o.seq_len, train_win.end());
    train_win.resize((n - h) * o.seq_len);
  }
  if (train_win.empty())
    return Status::Errorf(
        "distill: the training data has %lld tokens, fewer than one context of %d tokens (plus the "
        "held-out part); give more text (--data) or samples (--sample-tokens), or a shorter --seq-len",
        static_cast<long long>(report.data_tokens + report.sampled_tokens), o.seq_len);

  const double t0 = now_s();
  TeacherData train_data, held_data;
  SF_RETURN_IF_ERROR(
      compute_teacher_signal(*target, train_win, o.seq_len, o.top_k, &train_data, o.train.progress, "train"));
  SF_RETURN_IF_ERROR(
      compute_teacher_signal(*target, held_win, o.seq_len, o.top_k, &held_data, o.train.progress, "held-out"));
  report.teacher_seconds = now_s() - t0;
  report.train_windows = train_data.n_windows();
  report.heldout_windows = held_data.n_windows();
  report.n_params = ParamLayout(c).total;
  std::fprintf(stderr,
               "distill: %lld train windows x %d tokens (%lld held out), teacher top-%d in %.1f s, draft %lld params\n",
               static_cast<long long>(report.train_windows), o.seq_len, static_cast<long long>(report.heldout_windows),
               o.top_k, report.teacher_seconds, static_cast<long long>(report.n_params));

  ThreadPool& pool = target->pool();
  SF_ASSIGN_OR_RETURN(report.train, train_draft(c, train_data, o.train, pool));
  report.heldout = evaluate_agreement(c, report.train.params, held_data, o.train.loss, pool);
  TeacherData some = train_data;
  const int64_t keep = std::min<int64_t>(32, some.n_windows());
  some.tokens.resize(keep * o.seq_len);
  some.ids.resize(keep * o.seq_len * o.top_k);
  some.logits.resize(keep * o.seq_len * o.top_k);
  some.lse.resize(keep * o.seq_len);
  report.train_eval = evaluate_agreement(c, report.train.params, some, o.train.loss, pool);
  SF_RETURN_IF_ERROR(export_draft_gguf(c, report.train.params, file, o.out_path, o.f16));
  return report;
}

}  // namespace sf::train
