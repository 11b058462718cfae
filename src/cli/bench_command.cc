// specflash bench: flag parsing and terminal output around bench/ (which does the work).
#include "cli/bench_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "bench/bench_config.h"
#include "bench/bench_metrics.h"
#include "bench/bench_report.h"
#include "bench/bench_runner.h"
#include "bench/datasets.h"
#include "bench/device_pace.h"
#include "bench/machine_info.h"
#include "bench/phone_regime.h"
#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "version_info.h"  // SPECFLASH_GIT_COMMIT, generated at build time

namespace sf::cli {
namespace {

using bench::BenchConfig;

// The directory auto's sessions keep their profile in for one bench run, removed at the
// end: a bench measures this machine now, so it neither reads a profile left by earlier
// runs (of any command) nor leaves one behind.
class ScratchDirectory {
 public:
  ScratchDirectory() = default;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  Status create() {
    std::string pattern = (std::filesystem::temp_directory_path() / "specflash-bench-auto-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      return Status::Errorf("cannot create a directory for auto's profile in %s: %s",
                            std::filesystem::temp_directory_path().c_str(), std::strerror(errno));
    path_ = pattern;
    return Status::Ok();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool any_auto_keeps_profile(const BenchConfig& c) {
  for (const bench::BenchMethod& m : c.methods)
    if (m.kind == bench::BenchMethod::Kind::kAuto) return true;
  return false;
}

struct BenchFlags {
  std::string methods, budgets, json_path, preset;
  std::vector<std::string> datasets = {"spec_bench:16"};
  bool no_ar_check = false;
};

void add_bench_flags(CLI::App& app, BenchConfig& c, BenchFlags& f) {
  app.add_option("--methods", f.methods,
                 "comma list of ar (resident), flash-ar (streamed at each budget), chain, tree "
                 "(default: ar,flash-ar, plus chain,tree with --draft)");
  app.add_option("--budgets", f.budgets,
                 "comma list of memory budgets, each as --mem-budget takes it (default: 50%, or --mem-budget)");
  app.add_option("--dataset", f.datasets,
                 "NAME[/CATEGORY][:N], repeatable or comma list; NAME one of spec_bench, mt_bench, human_eval, "
                 "gsm8k, mbpp, tinystories (default: spec_bench:16)");
  app.add_option("--data-dir", c.data_dir, "the datasets folder (default: shared/datasets found above the binary)");
  app.add_option("--prompt-file", c.prompt_file,
                 "custom prompts instead of --dataset: one per line (\\n = newline), or .jsonl with \"text\"");
  app.add_option("-n,--n-predict", c.n_predict, "tokens to generate per prompt")->check(CLI::Range(1, 1 << 20));
  app.add_option("--temp", c.sampling.temperature, "temperature; 0 = greedy (so = AR is exact)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--seed", c.sampling.seed, "random seed for sampling");
  app.add_flag("--ignore-eos", c.ignore_eos, "always generate n-predict tokens");
  app.add_flag("--chat", c.chat, "wrap each prompt in the model's chat template, as the user's message");
  app.add_option("--chat-template", c.chat_template, "with --chat: use this template by name (chatml, llama3, ...)");
  app.add_option("--warmup", c.warmup, "untimed generations per method and budget before measuring")
      ->check(CLI::Range(0, 100));
  app.add_option("--repeat", c.repetitions,
                 "repetitions of every run, each a fresh session with its warm-up; the table gives the median and "
                 "the range")
      ->check(CLI::Range(1, 100));
  app.add_option("--preset", f.preset,
                 "phone: the scaled phone regime: budgets 0%,25% (unless --budgets) and storage EMULATED at the rate "
                 "that makes one target pass at 0% cost 40 of the draft's measured decoding steps (needs --draft)")
      ->check(CLI::IsMember({"phone"}));
  app.add_flag("--per-category", c.per_category, "add a table per dataset and category");
  app.add_flag("--no-ar-check", f.no_ar_check, "do not run ar to compare every method's tokens with it");
  app.add_option("--json", f.json_path, "write the configuration, summary and per-prompt rows as JSON to this file");
}

// Flag values to a checked BenchConfig; errors are usage errors. The draft flags are the
// shared session flags (--draft, --draft-len, --tree-widths), applied per method here.
Status finish_config(const SessionFlags& session_flags, const BenchFlags& f, BenchConfig& c) {
  if (!session_flags.spec.empty() && session_flags.spec != "none")
    return Status::Error("bench picks speculative methods with --methods (chain,tree,opt-tree,lever,...), not --spec");
  c.draft_model_path = session_flags.draft_path;
  c.draft_len = session_flags.draft_len;
  c.node_budget = session_flags.node_budget;
  c.max_tree_nodes = session_flags.max_tree_nodes;
  c.prune.exit_layer = session_flags.lever_exit_layer;
  c.prune.theta = session_flags.lever_theta;
  c.prune.predictor_path = session_flags.lever_predictor;
  c.profile_path = session_flags.latency_profile;
  c.auto_profile_dir = session_flags.auto_profile_dir;
  c.cats.ldm = session_flags.cats_ldm;
  c.cats.lsv = session_flags.cats_lsv;
  c.cats.extra_branches = session_flags.cats_branches;
  c.cats.draft_adapter = session_flags.cats_draft_adapter;
  c.cats.verifier_adapter = session_flags.cats_verifier_adapter;
  c.edgellm.alpha = session_flags.edgellm_alpha;
  c.edgellm.provisional = !session_flags.edgellm_no_provisional;
  c.edgellm.shape = edgellm_shape_of(session_flags.edgellm_shape);
  c.retrieval.history_dir = session_flags.history_dir;
  c.retrieval.history_task = session_flags.history_task;
  c.retrieval.history_max_tokens = static_cast<uint64_t>(session_flags.history_max_tokens);
  c.retrieval.history_clear = session_flags.history_clear;
  c.mirror.exit_layer = session_flags.mirror_exit_layer;
  c.mirror.kappa = session_flags.mirror_kappa;
  c.draft_threads = session_flags.draft_threads;
  const std::string methods =
      !f.methods.empty() ? f.methods : (c.draft_model_path.empty() ? "ar,flash-ar" : "ar,flash-ar,chain,tree");
  SF_ASSIGN_OR_RETURN(c.methods, bench::parse_methods(methods));
  if (!f.budgets.empty() && !session_flags.mem_budget.empty())
    return Status::Error("give memory budgets with --budgets or --mem-budget, not both");
  if (f.preset == "phone" && !session_flags.io_bandwidth.empty())
    return Status::Error("--preset phone sets the emulated storage rate itself; drop --io-bandwidth");
  if (f.preset == "phone" && session_flags.draft_path.empty())
    return Status::Error("--preset phone measures the regime in draft steps: it needs a draft model (--draft)");
  const std::string default_budgets = f.preset == "phone" ? "0%,25%" : "50%";
  const std::string budgets = !f.budgets.empty()                  ? f.budgets
                              : !session_flags.mem_budget.empty() ? session_flags.mem_budget
                                                                  : default_budgets;
  SF_ASSIGN_OR_RETURN(c.budgets, bench::parse_budgets(budgets));
  if (!session_flags.tree_widths.empty()) {
    SF_ASSIGN_OR_RETURN(c.tree_widths, bench::parse_tree_widths(session_flags.tree_widths));
  }
  if (c.prompt_file.empty()) {
    SF_ASSIGN_OR_RETURN(c.datasets, bench::parse_dataset_specs(f.datasets));
  }
  if (c.data_dir.empty()) c.data_dir = bench::default_data_dir();
  c.compare_to_ar = !f.no_ar_check;
  if (!c.chat_template.empty()) c.chat = true;
  return bench::validate(c);
}

// Loads and selects the prompts. A missing file is a runtime error (exit 1); a category
// the dataset does not have is a usage error (exit 2).
int load_prompts(const BenchConfig& c, std::vector<bench::Prompt>* prompts) {
  if (!c.prompt_file.empty()) {
    auto loaded = bench::load_prompt_file(c.prompt_file);
    if (!loaded.ok()) return fail(loaded.status());
    *prompts = std::move(*loaded);
    return 0;
  }
  for (const bench::DatasetSpec& spec : c.datasets) {
    auto all = bench::load_dataset(c.data_dir, spec.name);
    if (!all.ok()) return fail(all.status());
    auto chosen = bench::select_prompts(*all, spec);
    if (!chosen.ok()) return usage_error(chosen.status());
    prompts->insert(prompts->end(), chosen->begin(), chosen->end());
  }
  if (prompts->empty()) return fail("the datasets gave no prompts");
  return 0;
}

std::string prompt_source(const BenchConfig& c) {
  if (!c.prompt_file.empty()) return c.prompt_file;
  std::string s;
  for (const auto& d : c.datasets) s += (s.empty() ? "" : ",") + d.to_string();
  return s;
}

// One status line per event; on a terminal it rewrites itself in place.
void show_progress(const bench::BenchProgress& p) {
  static const bool tty = isatty(fileno(stderr));
  const std::string method_label = bench::method_name(p.run->method);
  const char* method = method_label.c_str();
  const std::string& budget = p.run->budget.label;
  const char* lead = tty ? "\r\033[K" : "";
  if (p.prompt == 0) {
    std::fprintf(stderr, "%s[bench %zu/%zu] %s @ %s: loading%s", lead, p.run_index + 1, p.n_runs, method,
                 budget.c_str(), tty ? "" : "\n");
  } else {
    const bool last = p.prompt == p.n_prompts;
    std::fprintf(stderr, "%s[bench %zu/%zu] %s @ %s: prompt %zu/%zu, %.2f tok/s%s", lead, p.run_index + 1, p.n_runs,
                 method, budget.c_str(), p.prompt, p.n_prompts, p.tokens_per_s, !tty || last ? "\n" : "");
  }
  std::fflush(stderr);
}

}  // namespace

int bench_command(int argc, char** argv) {
  CLI::App app{
      "Measure decoding speed of plain and speculative methods at memory budgets over dataset prompts. "
      "Markdown table to stdout, progress to stderr.",
      "specflash bench"};
  show_defaults_in_help(app);
  SessionFlags session_flags;
  BenchConfig config;
  config.sampling.temperature = 0;
  config.sampling.seed = 0xC0FFEE;
  BenchFlags flags;
  session_flags.add_to(app, /*model_required=*/false);
  add_bench_flags(app, config, flags);
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;

  if (Status s = finish_config(session_flags, flags, config); !s.ok()) return usage_error(s);
  session_flags.print_notes();
  ScratchDirectory auto_scratch;
  std::string auto_profile_note;
  if (any_auto_keeps_profile(config)) {
    if (config.auto_profile_dir == "none") {
      config.auto_profile_dir.clear();
      auto_profile_note = "none kept (--auto-profile-dir none): every session of auto starts afresh";
    } else if (config.auto_profile_dir.empty()) {
      if (Status s = auto_scratch.create(); !s.ok()) return fail(s);
      config.auto_profile_dir = auto_scratch.path();
      auto_profile_note =
          "kept per row for this bench run only (a fresh directory, removed at the end): auto's repetition 1 "
          "of a row starts afresh, later repetitions from what the earlier ones (warm-ups included) learnt; "
          "auto-cold starts afresh in every repetition";
    } else {
      auto_profile_note = "kept in " + config.auto_profile_dir +
                          " (--auto-profile-dir): auto starts from whatever earlier runs left there";
    }
  }
  // The shared options without budget and drafting, which each run sets for itself.
  SessionFlags base_flags = session_flags;
  base_flags.spec = "none";  // not the default (auto): each run sets its method, and with it its checks
  base_flags.mem_budget.clear();
  base_flags.draft_path.clear();
  base_flags.tree_widths.clear();
  auto base = base_flags.to_options();
  if (!base.ok()) return usage_error(base.status());

  std::vector<bench::Prompt> prompts;
  if (int rc = load_prompts(config, &prompts); rc != 0) return rc;
  std::string preset_note;
  if (flags.preset == "phone") {
    std::fprintf(stderr, "[bench] measuring the draft's decoding step for the phone regime\n");
    auto regime = bench::measure_phone_regime(*base, config.draft_model_path);
    if (!regime.ok()) return fail(regime.status());
    base->io_bandwidth = regime->io_bandwidth;
    preset_note = regime->describe();
    std::fprintf(stderr, "[bench] %s\n", preset_note.c_str());
    if (regime->device_is_slower())
      std::fprintf(stderr,
                   "warning: --preset phone: this storage is slower than the regime's emulated rate; the rows "
                   "measure the storage itself (see the note above)\n");
  }
  // Opened now so that an unwritable path fails before a long run, not after it.
  std::unique_ptr<FILE, int (*)(FILE*)> json_out(nullptr, &std::fclose);
  if (!flags.json_path.empty()) {
    json_out.reset(std::fopen(flags.json_path.c_str(), "w"));
    if (!json_out) return fail(flags.json_path + ": cannot write the JSON report: " + std::strerror(errno));
  }

  bench::BenchCallbacks callbacks;
  callbacks.progress = show_progress;
  callbacks.note = [](const std::string& note) { std::fprintf(stderr, "note: %s\n", note.c_str()); };
  const auto runs = bench::plan_runs(config, *base);
  auto result = bench::run_bench(config, runs, prompts, callbacks);
  if (!result.ok()) return fail(result.status());
  const bench::DevicePace device_pace = bench::measure_device_pace(*result, base->io_bandwidth);
  if (const auto note = bench::device_pace_note(device_pace, base->io_bandwidth)) {
    std::fprintf(stderr, "warning: %s\n", note->c_str());
    result->notes.push_back(*note);
  }

  bench::ReportContext context;
  context.command_line = "specflash " + bench::quote_command_line(argc, argv);
  context.model_path = base->model_path;
  for (const auto& run : runs)
    if (run.options.spec.enabled()) context.draft_model_path = config.draft_model_path;
  context.io_bandwidth = base->io_bandwidth;
  context.device_pace = device_pace;
  context.preset = preset_note;
  context.auto_profile = auto_profile_note;
  context.prompt_source = prompt_source(config);
  context.machine = bench::read_machine_info();
  // The commit the binary was built from; the source tree's, when it differs, too (a
  // benchmark run by a binary older than the checkout must not take the checkout's name).
  context.commit = SPECFLASH_GIT_COMMIT;
  if (const std::string tree = bench::git_commit(); tree != context.commit)
    context.commit += " (source tree at run time: " + tree + ")";
  context.date = bench::utc_timestamp();
  const auto rows = bench::summarize_runs(*result);
  const auto category_rows = bench::summarize_categories(*result);
  std::printf("%s", bench::markdown_report(context, config, *result, rows, category_rows).c_str());
  if (json_out) {
    const auto json = bench::json_report(context, config, *result, rows, category_rows);
    // Replace, not throw, on invalid UTF-8: a prompt file may hold any bytes.
    const std::string text = json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    // Checked at the write, the flush and the close, each with the system's reason.
    Status st = write_checked(json_out.get(), text, flags.json_path);
    const Status closed = close_checked(json_out.release(), flags.json_path);
    if (st.ok()) st = closed;
    if (!st.ok()) return fail(st);
  }
  return 0;
}

}  // namespace sf::cli
