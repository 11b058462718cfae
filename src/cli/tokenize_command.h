// specflash tokenize: prints the token ids and pieces of a text.
//   specflash tokenize [-m MODEL.gguf] TEXT | --file F  [--ids] [--no-bos] [--parse-special]
// Exit codes: 0 ok, 1 runtime error (unreadable model, invalid UTF-8), 2 usage error;
// errors go to stderr as one line starting "error: ".
#pragma once

namespace sf {
// argv[0] is the subcommand name ("tokenize").
int run_tokenize_command(int argc, char** argv);
}  // namespace sf
