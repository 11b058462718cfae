// specflash chat. Each turn renders the whole conversation with the chat format and
// generates from it, so the prompt is always exactly what the template defines;
// Session::generate reuses the cached K/V of the unchanged history, so a turn only
// computes the new message. Every session flag of `run` applies (draft, --mem-budget,
// --io-bandwidth, samplers, --stats).
#include "cli/chat_command.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "base/log.h"
#include "cli/chat_context.h"
#include "cli/chat_format.h"
#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/generation_flags.h"
#include "cli/line_editor.h"
#include "cli/prompt_text.h"
#include "cli/session_flags.h"
#include "cli/stop_strings.h"
#include "engine/session.h"

namespace sf {
namespace {

// Set by SIGINT while a reply is generated; the token callback stops the reply.
std::atomic<bool> g_stop_reply{false};
void on_sigint(int) { g_stop_reply.store(true); }

// Reads one message: on a terminal with the line editor, else plain lines. A line ending
// in a backslash continues on the next line (the backslash becomes a newline), as in
// llama.cpp's interactive mode. Returns false at end of input.
class MessageReader {
 public:
  explicit MessageReader(bool terminal) : terminal_(terminal), editor_(STDIN_FILENO, STDERR_FILENO) {}

  // *interrupted: Ctrl-C at the prompt (the caller decides what that means).
  bool read(std::string* message, bool* interrupted) {
    message->clear();
    *interrupted = false;
    std::string line;
    while (true) {
      if (terminal_) {
        const auto r = editor_.read_line(message->empty() ? "> " : "... ", &line);
        if (r == cli::LineEditor::Result::kInterrupted) {
          *interrupted = true;
          message->clear();
          return true;
        }
        if (r == cli::LineEditor::Result::kEndOfInput) return !message->empty();
      } else if (!std::getline(std::cin, line)) {
        return !message->empty();
      }
      if (!line.empty() && line.back() == '\\') {
        line.pop_back();
        *message += line + "\n";
        continue;
      }
      *message += line;
      if (terminal_) editor_.add_history(*message);
      return true;
    }
  }

 private:
  bool terminal_;
  cli::LineEditor editor_;
};

void print_history(const std::vector<ChatMessage>& messages) {
  for (const auto& m : messages) std::fprintf(stderr, "[%s] %s\n", m.role.c_str(), m.content.c_str());
}

}  // namespace

int run_chat_command(int argc, char** argv) {
  CLI::App app{
      "Chat with a model in the terminal. Enter sends a message; end a line with \\ to continue it on the next. "
      "Commands: /reset starts over, /history shows the conversation, /exit (or Ctrl-D) quits. Ctrl-C stops a "
      "reply (the conversation keeps it); Ctrl-C at an empty prompt quits. When the conversation outgrows the "
      "context, the oldest turns are dropped.",
      "specflash chat"};
  cli::show_defaults_in_help(app);
  cli::SessionFlags session_flags;
  cli::GenerationFlags gen;
  gen.n_predict = 512;
  std::string template_name, system_prompt;
  bool verbose = false;
  session_flags.add_to(app, /*model_required=*/false);
  app.add_option(
      "--chat-template", template_name,
      "prompt format by name, overriding the model's: transcript (the fallback for models without a template), " + [] {
        std::string s;
        for (const auto& n : ChatTemplate::known_names()) s += (s.empty() ? "" : ", ") + n;
        return s;
      }());
  app.add_option("--system,--system-prompt", system_prompt, "system message that starts the conversation (also -sys)");
  gen.add_to(app, "most tokens per reply");
  app.get_option("--stats")->description("print each reply's timing, speculative and streaming statistics to stderr");
  app.get_option("--stats-json")->description("write the last reply's statistics as one JSON object to this file");
  app.add_flag("-v,--verbose", verbose, "log progress to stderr");
  int code = 0;
  if (!cli::parse_args(app, argc, argv, &code)) return code;
  if (verbose) set_log_level(LogLevel::kInfo);
  gen.finish();
  if (gen.escape) system_prompt = cli::process_escapes(system_prompt);

  session_flags.repeatable_sampling = gen.seed >= 0 && !gen.sampling.greedy();
  auto options = session_flags.to_options();
  if (!options.ok()) return cli::usage_error(options.status());
  options->cancel = &g_stop_reply;  // Ctrl-C also stops a long prefill between chunks
  session_flags.print_notes();
  auto session = cli::create_session_with_progress(*options);
  if (!session.ok()) return cli::fail(session.status());
  Session& s = **session;
  bool fallback = false;
  auto format = cli::ChatFormat::for_tokenizer(s.tokenizer(), template_name, &fallback);
  if (!format.ok()) return cli::fail(format.status().with_context(options->model_path));
  if (fallback)
    std::fprintf(stderr,
                 "note: %s has no chat template; using the plain 'User:/Assistant:' transcript format "
                 "(--chat-template NAME picks another)\n",
                 options->model_path.c_str());
  SF_LOG_INFO("chat format: %s; seed %llu", format->name().c_str(), static_cast<unsigned long long>(gen.sampling.seed));

  const bool terminal = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);

  std::vector<ChatMessage> messages;
  if (!system_prompt.empty()) messages.push_back({"system", system_prompt});
  const std::vector<ChatMessage> initial = messages;
  MessageReader reader(terminal);
  std::vector<std::string> stops = gen.reverse_prompts;
  stops.push_back(format->end_of_turn());
  auto to_tokens = [&](const std::vector<ChatMessage>& m) -> Result<std::vector<int32_t>> {
    SF_ASSIGN_OR_RETURN(std::string prompt, format->render(m));
    return s.tokenize(prompt, /*parse_special=*/true);
  };
  std::string message;
  bool interrupted = false;
  while (reader.read(&message, &interrupted)) {
    if (interrupted) {
      if (message.empty()) break;
      continue;
    }
    if (message == "/exit" || message == "/quit") break;
    if (message == "/reset") {
      messages = initial;
      std::fprintf(stderr, "(conversation cleared)\n");
      continue;
    }
    if (message == "/history") {
      print_history(messages);
      continue;
    }
    if (message.empty()) continue;
    messages.push_back({"user", message});
    const int reserve = gen.n_predict >= 0 ? std::min(gen.n_predict, s.n_ctx() / 2) : s.n_ctx() / 2;
    auto fitted = cli::fit_conversation(messages, to_tokens, s.n_ctx(), reserve);
    if (!fitted.ok()) {
      std::fprintf(stderr, "error: %s\n", fitted.status().message().c_str());
      messages.pop_back();
      continue;
    }
    if (fitted->dropped_messages > 0)
      std::fprintf(stderr, "note: the conversation outgrew the context of %d tokens; dropped the %d oldest message%s\n",
                   s.n_ctx(), fitted->dropped_messages, fitted->dropped_messages == 1 ? "" : "s");

    cli::StopStrings stop(stops);
    Status write_status;
    g_stop_reply.store(false);
    const int n = gen.tokens_to_generate(s.n_ctx(), static_cast<int>(fitted->tokens.size()));
    auto result = s.generate(fitted->tokens, n, gen.sampling, gen.ignore_eos, [&](int32_t, const std::string& text) {
      write_status = cli::write_checked(stdout, stop.push(text), "stdout");
      std::fflush(stdout);
      return write_status.ok() && !stop.stopped() && !g_stop_reply.load();
    });
    if (!result.ok() && result.status().message() == SessionOptions::kCancelledMessage) {
      g_stop_reply.store(false);
      messages.pop_back();
      std::fprintf(stderr, "(stopped before the reply began; the message was not sent)\n");
      continue;
    }
    if (write_status.ok()) write_status = cli::write_checked(stdout, stop.flush() + "\n", "stdout");
    if (write_status.ok()) write_status = cli::finish_stdout();
    if (!result.ok()) return cli::fail(result.status());
    if (!write_status.ok()) return cli::fail(write_status);
    if (g_stop_reply.exchange(false)) std::fprintf(stderr, "(reply stopped; it stays in the conversation)\n");
    messages.push_back({"assistant", stop.text()});
    if (gen.stats) cli::print_generation_stats(*result, s, gen.sampling.seed);
    if (!gen.stats_json_path.empty()) {
      const Status st =
          cli::write_file_checked(gen.stats_json_path, cli::generation_stats_json(*result, s, gen.sampling.seed));
      if (!st.ok()) return cli::fail(st);
    }
  }
  return 0;
}

}  // namespace sf
