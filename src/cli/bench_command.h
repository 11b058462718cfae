// specflash bench: decoding speed of plain and speculative methods at chosen memory
// budgets over dataset prompts, as a Markdown table on stdout (and all of it as JSON).
//   specflash bench [-m MODEL.gguf] [--methods ar,flash-ar,chain,tree] [--budgets 100%,50%,0%]
//                   [--dataset spec_bench:16 ...] [--draft DRAFT.gguf] [--json FILE]
// Progress goes to stderr. Exit codes: 0 ok, 1 runtime error, 2 usage error; errors are
// one line on stderr starting "error: ".
#pragma once

namespace sf::cli {
// argv[0] is the subcommand name ("bench").
int bench_command(int argc, char** argv);
}  // namespace sf::cli
