// specflash: the command-line front end. Dispatches to one subcommand per file.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/bench_command.h"
#include "cli/chat_command.h"
#include "cli/commands.h"
#include "cli/distill_command.h"
#include "cli/pack_command.h"
#include "cli/tokenize_command.h"

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
};

void print_usage() {
  std::printf("usage: specflash <command> [options]\n\ncommands:\n");
  for (const auto& c : kSubcommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::printf("\n'specflash <command> --help' shows a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : kSubcommands)
    if (!std::strcmp(argv[1], c.name)) return c.fn(argc - 1, argv + 1);
  std::fprintf(stderr, "error: unknown command '%s' (run 'specflash --help' for the list)\n", argv[1]);
  return 2;
}
