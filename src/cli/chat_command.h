// specflash chat: an interactive chat in the terminal.
//   specflash chat [-m MODEL.gguf] [--chat-template NAME] [--system TEXT] [sampling options]
// Reads one user message per line from stdin (/reset starts over, /exit or EOF quits),
// streams each reply to stdout. The prompt format comes from the model's
// tokenizer.chat_template, or from --chat-template NAME when the model has none or an
// unsupported one. Exit codes: 0 ok, 1 runtime error, 2 usage error.
#pragma once

namespace sf {
// argv[0] is the subcommand name ("chat").
int run_chat_command(int argc, char** argv);
}  // namespace sf
