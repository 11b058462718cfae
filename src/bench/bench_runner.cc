#include "bench/bench_runner.h"

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "engine/pack_hint.h"
#include "tokenizer/chat_template.h"

namespace sf::bench {
namespace {

// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0). Without it the
// fully resident ar run would set the peak for every later run. malloc_trim first hands
// the previous session's freed heap back to the kernel, which glibc would otherwise keep
// counted in RSS.
bool reset_peak_rss() {
  malloc_trim(0);
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

SessionInfo describe_session(Session& s, bool rss_reset) {
  SessionInfo info;
  info.threads = s.pool().size();
  info.load_seconds = s.load_seconds();
  const ResidencyPlan& plan = s.plan();
  info.residency = plan.describe();
  info.resident_weight_bytes = plan.base_bytes + plan.resident_unit_bytes;
  info.streamed_bytes_per_pass = plan.streamed_bytes_per_pass;
  info.footprint_bytes = plan.footprint_bytes();
  info.budget_bytes = plan.budget_bytes;
  if (const LayerStreamer* st = s.streamer()) {
    info.io_backend = st->backend_name();
    info.direct_io = st->direct_io();
    info.emulated_io = st->emulated();
  }
  info.peak_rss_reset = rss_reset;
  return info;
}

std::string describe_model(const Session& s) {
  const ModelHParams& hp = s.model().hparams();
  std::error_code ec;
  const auto size = std::filesystem::file_size(s.options().model_path, ec);
  return hp.arch_name + ", " + std::to_string(hp.n_layer) + " layers, " + (ec ? "?" : format_bytes(size));
}

// Tokenizes every prompt with the first session's tokenizer and cuts prompts that leave
// no room for generation. The cut is from the left (the end of a prompt is what the
// continuation depends on), keeping BOS so the model still sees a sequence start.
// Fills result->prompts, and notes and chat_template.
Status prepare_prompts(const BenchConfig& config, const std::vector<Prompt>& prompts, const Session& session,
                       BenchResult* result) {
  std::vector<std::string>* notes = &result->notes;
  std::optional<ChatTemplate> chat;
  if (config.chat) {
    SF_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::for_tokenizer(session.tokenizer(), config.chat_template));
    result->chat_template = t.name();
    chat = t;
  }
  const int max_tokens = session.n_ctx() - config.n_predict - spec_context_margin(config);
  if (max_tokens < 2)
    return Status::Errorf("--n-predict %d leaves no room for a prompt in a context of %d tokens; raise --ctx-size",
                          config.n_predict, session.n_ctx());
  const int32_t bos = session.tokenizer().bos_id();
  std::vector<PreparedPrompt>& out = result->prompts;
  for (const Prompt& p : prompts) {
    PreparedPrompt pp{p, {}, 0};
    std::string text = p.text;
    if (chat) {
      SF_ASSIGN_OR_RETURN(text, chat->render({{"user", p.text}}, /*add_generation_prompt=*/true));
    }
    // Dataset text is plain text; only a chat template's own markers are special tokens.
    auto ids = session.tokenize(text, /*parse_special=*/chat.has_value());
    if (!ids.ok()) return ids.status().with_context(p.id);
    pp.ids = std::move(*ids);
    pp.original_tokens = static_cast<int>(pp.ids.size());
    if (pp.original_tokens > max_tokens) {
      const bool keep_bos = bos >= 0 && pp.ids.front() == bos;
      std::vector<int32_t> cut;
      if (keep_bos) cut.push_back(bos);
      cut.insert(cut.end(), pp.ids.end() - (max_tokens - static_cast<int>(cut.size())), pp.ids.end());
      pp.ids = std::move(cut);
      notes->push_back(p.id + ": prompt of " + std::to_string(pp.original_tokens) +
                       " tokens truncated from the left to " + std::to_string(pp.ids.size()) + " (context " +
                       std::to_string(session.n_ctx()) + ", n_predict " + std::to_string(config.n_predict) + ")");
    }
    if (pp.ids.empty()) return Status::Error(p.id + ": the prompt has no tokens");
    out.push_back(std::move(pp));
  }
  return Status::Ok();
}

}  // namespace

Result<BenchResult> run_bench(const BenchConfig& config, const std::vector<BenchRunSpec>& runs,
                              const std::vector<Prompt>& prompts, const BenchCallbacks& callbacks) {
  BenchResult result;
  std::optional<size_t> ar;      // index of the run equal_to_ar compares with, once it has run
  bool pack_hint_given = false;  // the pack note: once per bench, at its first streamed session
  const int repetitions = std::max(1, config.repetitions);
  const size_t n_total = runs.size() * static_cast<size_t>(repetitions);
  for (size_t i_total = 0; i_total < n_total; ++i_total) {
    const size_t r = i_total % runs.size();
    const int repetition = static_cast<int>(i_total / runs.size());
    const BenchRunSpec& spec = runs[r];
    BenchProgress progress{&spec, i_total, n_total, 0, prompts.size(), 0};
    if (callbacks.progress) callbacks.progress(progress);
    const bool rss_reset = reset_peak_rss();
    auto created = Session::create(spec.options);
    if (!created.ok())
      return created.status().with_context(std::string(method_name(spec.method)) + " at " + spec.budget.label);
    Session& session = **created;
    if (i_total == 0) {
      result.target_description = describe_model(session);
      const size_t first_note = result.notes.size();
      SF_RETURN_IF_ERROR(prepare_prompts(config, prompts, session, &result));
      if (callbacks.note)
        for (size_t i = first_note; i < result.notes.size(); ++i) callbacks.note(result.notes[i]);
    }
    if (!pack_hint_given) {
      const std::string hint = row_panel_pack_hint(session, spec.options.model_path);
      if (!hint.empty()) {
        pack_hint_given = true;
        result.notes.push_back(hint);
        if (callbacks.note) callbacks.note(hint);
      }
    }
    RunResult run{spec.method, spec.budget, describe_session(session, rss_reset), {}, repetition};
    std::vector<int32_t> tokens;
    const auto collect = [&tokens](int32_t id, const std::string&) {
      if (id >= 0) tokens.push_back(id);  // id -1 carries the decoder's final text only
      return true;
    };
    for (int w = 0; w < config.warmup && !result.prompts.empty(); ++w) {
      auto warm =
          session.generate(result.prompts[0].ids, config.n_predict, config.sampling, config.ignore_eos, collect);
      if (!warm.ok()) return warm.status().with_context("warm-up");
    }
    double decode_tokens = 0, decode_seconds = 0;
    for (size_t i = 0; i < result.prompts.size(); ++i) {
      tokens.clear();
      auto stats =
          session.generate(result.prompts[i].ids, config.n_predict, config.sampling, config.ignore_eos, collect);
      if (!stats.ok())
        return stats.status().with_context(std::string(method_name(spec.method)) + " at " + spec.budget.label + ", " +
                                           result.prompts[i].prompt.id);
      PromptRun pr{i, tokens, *stats, std::nullopt};
      if (ar) pr.equal_to_ar = result.runs[*ar].prompts[i].tokens == tokens;
      decode_tokens += stats->decode_tokens();
      decode_seconds += stats->decode_seconds;
      run.prompts.push_back(std::move(pr));
      progress.prompt = i + 1;
      progress.tokens_per_s = decode_seconds > 0 ? decode_tokens / decode_seconds : 0;
      if (callbacks.progress) callbacks.progress(progress);
    }
    result.runs.push_back(std::move(run));
    if (spec.method == BenchMethod::kAr && config.compare_to_ar && !ar) ar = result.runs.size() - 1;
    // The session is destroyed here, before the next one is created (see the header).
  }
  return result;
}

}  // namespace sf::bench
