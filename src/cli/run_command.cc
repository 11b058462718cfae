// specflash run: generate text from a prompt, streaming it to stdout.
#include <unistd.h>

#include <cstdio>

#include "base/log.h"
#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/generation_flags.h"
#include "cli/prompt_text.h"
#include "cli/session_flags.h"
#include "cli/stop_strings.h"
#include "engine/session.h"

namespace sf::cli {

int run_command(int argc, char** argv) {
  CLI::App app{"Generate text from a prompt. The generated text goes to stdout; logs and statistics to stderr.",
               "specflash run"};
  show_defaults_in_help(app);
  SessionFlags session_flags;
  GenerationFlags gen;
  std::string prompt, prompt_file;
  bool verbose = false, no_special = false;
  session_flags.add_to(app, /*model_required=*/false);
  auto* prompt_opt = app.add_option("-p,--prompt", prompt, "prompt text");
  app.add_option("-f,--file", prompt_file, "read the prompt from a file (one trailing newline is dropped)")
      ->excludes(prompt_opt);
  gen.add_to(app, "tokens to generate");
  app.add_flag("--no-special", no_special, "treat special-token text in the prompt as plain text");
  app.add_flag("-v,--verbose", verbose, "log progress to stderr");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  if (verbose) set_log_level(LogLevel::kInfo);
  gen.finish();

  if (!prompt_file.empty()) {
    auto text = read_prompt_file(prompt_file);
    if (!text.ok()) return fail(text.status());
    prompt = *text;
  }
  if (gen.escape) prompt = process_escapes(prompt);

  session_flags.repeatable_sampling = gen.seed >= 0 && !gen.sampling.greedy();
  auto options = session_flags.to_options();
  if (!options.ok()) return usage_error(options.status());
  session_flags.print_notes();
  auto session = create_session_with_progress(*options);
  if (!session.ok()) return fail(session.status());
  Session& s = **session;
  SF_LOG_INFO("loaded %s in %.2f s; seed %llu", options->model_path.c_str(), s.load_seconds(),
              static_cast<unsigned long long>(gen.sampling.seed));
  auto tokens = s.tokenize(prompt, !no_special);
  if (!tokens.ok()) return fail(tokens.status());
  if (static_cast<int>(tokens->size()) >= s.n_ctx())
    return fail(Status::Errorf("the prompt is %zu tokens long but the context holds %d; shorten it or raise --ctx-size",
                               tokens->size(), s.n_ctx()));

  StopStrings stops(gen.reverse_prompts);
  Status write_status;
  auto emit = [&](const std::string& text) {
    if (write_status.ok()) write_status = write_checked(stdout, text, "stdout");
    if (write_status.ok() && std::fflush(stdout) != 0) write_status = finish_stdout();
    return write_status.ok();
  };
  const int n = gen.tokens_to_generate(s.n_ctx(), static_cast<int>(tokens->size()));
  auto result = s.generate(*tokens, n, gen.sampling, gen.ignore_eos, [&](int32_t, const std::string& text) {
    // A closed pipe or a full disk ends the generation: nobody reads the rest.
    return emit(stops.push(text)) && !stops.stopped();
  });
  emit(stops.flush());
  // Only the generated text goes to a pipe; a terminal gets a final newline for the prompt.
  if (isatty(fileno(stdout))) emit("\n");
  if (!result.ok()) return fail(result.status());
  if (!write_status.ok()) return fail(write_status);
  if (gen.stats) print_generation_stats(*result, s, gen.sampling.seed);
  if (!gen.stats_json_path.empty()) {
    const Status st = write_file_checked(gen.stats_json_path, generation_stats_json(*result, s, gen.sampling.seed));
    if (!st.ok()) return fail(st);
  }
  return 0;
}

}  // namespace sf::cli
