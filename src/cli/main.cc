// specflash: the command-line front end. Dispatches to one subcommand per file.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/bench_command.h"
#include "cli/chat_command.h"
#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/distill_command.h"
#include "cli/pack_command.h"
#include "cli/tokenize_command.h"
#include "cli/version.h"

namespace {

struct Subcommand {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

const Subcommand kSubcommands[] = {
    {"run", sf::cli::run_command, "generate text from a prompt (streams to stdout)"},
    {"dump", sf::cli::dump_command, "write tokens, top-k logits and greedy continuations as JSONL"},
    {"info", sf::cli::info_command, "print a GGUF file's architecture, sizes, types and metadata"},
    {"chat", sf::run_chat_command, "chat with a model in the terminal"},
    {"serve", sf::cli::serve_command, "serve the model over an OpenAI-compatible HTTP API"},
    {"tokenize", sf::run_tokenize_command, "print the token ids and pieces of a text"},
    {"quantize", sf::cli::quantize_command, "convert a model's weights to another type (Q8_0, Q4_0, Q4_K, Q6_K, ...)"},
    {"pack", sf::cli::pack_command,
     "rewrite a GGUF so each layer is one contiguous 4096-aligned range (for streaming)"},
    {"bench", sf::cli::bench_command, "measure decoding speed of methods at memory budgets over dataset prompts"},
    {"distill", sf::cli::distill_command, "train a small draft model distilled from a target's top-K logits"},
    {"synth", sf::cli::synth_command, "write a deterministic random-weight model of any supported shape"},
    {"profile", sf::cli::profile_command, "measure verification latency per tree size (the profile LEVER uses)"},
    {"speed", sf::cli::speed_command,
     "measure prompt (ppN) and generation (tgN) tokens per second as llama-bench does"},
    {"train-predictor", sf::cli::train_predictor_command,
     "train LEVER's early-exit pruning predictor for a target (--lever-predictor)"},
    {"train-adapter", sf::cli::train_adapter_command,
     "train a CATS draft or shallow-verifier adapter for a target (--cats-*-adapter)"},
};

void print_usage() {
  std::printf("usage: specflash <command> [options]\n\ncommands:\n");
  for (const auto& c : kSubcommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::printf(
      "\n'specflash <command> --help' shows a command's options; 'specflash --version' the build.\n"
      "Exit codes: 0 success, 1 error, 2 usage error (unknown command or option, bad value).\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::printf("%s", sf::cli::version_text().c_str());
    const sf::Status st = sf::cli::finish_stdout();
    return st.ok() ? 0 : sf::cli::fail(st);
  }
  // A closed pipe is a write error to report (exit 1), not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  for (const auto& c : kSubcommands)
    if (!std::strcmp(argv[1], c.name)) {
      const int code = c.fn(argc - 1, argv + 1);
      // Every command's stdout is checked once more at the end: buffered output that
      // could not be written (full disk, closed pipe) turns a success into an error.
      if (const sf::Status st = sf::cli::finish_stdout(); !st.ok() && code == 0) return sf::cli::fail(st);
      return code;
    }
  std::fprintf(stderr, "error: unknown command '%s' (run 'specflash --help' for the list)\n", argv[1]);
  return 2;
}
