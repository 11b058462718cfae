// specflash chat. Each turn renders the whole conversation with the chat template and
// generates from it, so the prompt is always exactly what the template defines;
// Session::generate reuses the cached K/V of the unchanged history, so a turn only
// computes the new message.
#include "cli/chat_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "base/log.h"
#include "cli/cli_common.h"
#include "cli/default_model.h"
#include "engine/session.h"
#include "tokenizer/chat_template.h"

namespace sf {

int run_chat_command(int argc, char** argv) {
  CLI::App app{
      "Chat with a model in the terminal: one message per line, /reset to start over, "
      "/exit or end of input to quit.",
      "specflash chat"};
  SessionOptions options;
  options.model_path = cli::default_model_path();
  std::string template_name, system_prompt;
  int n_predict = 512;
  SamplingParams sampling;
  sampling.seed = 0xC0FFEE;
  bool verbose = false;
  app.add_option("-m,--model", options.model_path, "GGUF model file (default: the embedded stories260K)");
  app.add_option(
      "--chat-template", template_name, "prompt format by name, overriding the model's (" + [] {
        std::string s;
        for (const auto& n : ChatTemplate::known_names()) s += (s.empty() ? "" : ", ") + n;
        return s;
      }() + ")");
  app.add_option("--system", system_prompt, "system message that starts the conversation");
  app.add_option("-n,--n-predict", n_predict, "most tokens per reply")->check(CLI::Range(1, 1 << 20));
  app.add_option("-t,--threads", options.n_threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("-c,--ctx-size", options.n_ctx, "context size in tokens (default: min(trained, 4096))")
      ->check(CLI::Range(0, 1 << 22));
  app.add_option("--temp", sampling.temperature, "temperature; 0 = greedy")->check(CLI::Range(0.0, 100.0));
  app.add_option("--top-k", sampling.top_k, "keep the k most likely tokens; 0 = off")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", sampling.top_p, "nucleus sampling threshold; 1 = off")->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", sampling.seed, "random seed");
  app.add_flag("-v,--verbose", verbose, "log progress to stderr");
  int code = 0;
  if (!cli::parse_args(app, argc, argv, &code)) return code;
  if (verbose) set_log_level(LogLevel::kInfo);

  auto session = Session::create(options);
  if (!session.ok()) return cli::fail(session.status());
  Session& s = **session;
  auto chat_template = ChatTemplate::for_tokenizer(s.tokenizer(), template_name);
  if (!chat_template.ok()) return cli::fail(chat_template.status().with_context(options.model_path));
  SF_LOG_INFO("chat template: %s", chat_template->name().c_str());

  const bool interactive = isatty(fileno(stdin));
  std::vector<ChatMessage> messages;
  if (!system_prompt.empty()) messages.push_back({"system", system_prompt});
  const std::vector<ChatMessage> initial = messages;
  std::string line;
  while (true) {
    if (interactive) {
      std::fprintf(stderr, "> ");
      std::fflush(stderr);
    }
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line == "/reset") {
      messages = initial;
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({"user", line});
    auto prompt = chat_template->render(messages, /*add_generation_prompt=*/true);
    if (!prompt.ok()) return cli::fail(prompt.status());
    auto tokens = s.tokenize(*prompt, /*parse_special=*/true);
    if (!tokens.ok()) return cli::fail(tokens.status());
    if (static_cast<int>(tokens->size()) >= s.n_ctx()) {
      std::fprintf(stderr,
                   "error: the conversation (%zu tokens) no longer fits the context of %d; "
                   "use /reset or a larger --ctx-size\n",
                   tokens->size(), s.n_ctx());
      messages.pop_back();
      continue;
    }
    // Stop at the template's end-of-turn text too: some models emit it as plain text.
    const std::string end_of_turn = chat_template->end_of_turn();
    std::string reply;
    size_t printed = 0;
    auto result = s.generate(*tokens, n_predict, sampling, /*ignore_eos=*/false, [&](int32_t, const std::string& text) {
      reply += text;
      const size_t stop = reply.find(end_of_turn);
      // Print all but a tail that could be the start of end_of_turn.
      const size_t safe = stop != std::string::npos           ? stop
                          : reply.size() > end_of_turn.size() ? reply.size() - end_of_turn.size()
                                                              : 0;
      if (safe > printed) {
        std::fwrite(reply.data() + printed, 1, safe - printed, stdout);
        std::fflush(stdout);
        printed = safe;
      }
      if (stop != std::string::npos) {
        reply.resize(stop);
        return false;
      }
      return true;
    });
    if (!result.ok()) return cli::fail(result.status());
    if (reply.size() > printed) std::fwrite(reply.data() + printed, 1, reply.size() - printed, stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    messages.push_back({"assistant", reply});
  }
  return 0;
}

}  // namespace sf
