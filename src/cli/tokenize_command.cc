// specflash tokenize: the semantics of llama.cpp's tokenizer test vectors: the text is
// tokenized as raw bytes, BOS/EOS follow the vocabulary unless --no-bos, and special-token
// text ("<s>", "<|im_start|>") is only recognised with --parse-special.
#include "cli/tokenize_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/cli_common.h"
#include "cli/default_model.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace sf {

int run_tokenize_command(int argc, char** argv) {
  CLI::App app{"Print the token ids and pieces of a text, one 'id -> 'piece'' line per token.", "specflash tokenize"};
  cli::show_defaults_in_help(app);
  std::string model_path = cli::default_model_path();
  std::string text, file;
  bool ids_only = false, no_bos = false, parse_special = false;
  app.add_option("-m,--model", model_path, "GGUF file with a tokenizer (default: the embedded stories260K)");
  auto* text_opt = app.add_option("text", text, "text to tokenize");
  auto* file_opt = app.add_option("--file", file, "read the text from this file, as raw bytes");
  text_opt->excludes(file_opt);
  app.add_flag("--ids", ids_only, "print only the ids, as [1, 2, 3] on one line");
  app.add_flag("--no-bos", no_bos, "add no BOS (nor EOS) token");
  app.add_flag("--parse-special", parse_special,
               "recognise special-token text such as <s> or <|im_start|> in the input");
  int code = 0;
  if (!cli::parse_args(app, argc, argv, &code)) return code;
  if (text_opt->count() == 0 && file_opt->count() == 0) {
    std::fprintf(stderr, "error: give the text to tokenize, or --file F (see '%s --help')\n", app.get_name().c_str());
    return 2;
  }
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return cli::fail(file + ": cannot open the text file");
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }

  auto gguf = gguf::GgufFile::open(model_path);
  if (!gguf.ok()) return cli::fail(gguf.status());
  auto tokenizer = Tokenizer::from_gguf(*gguf);
  if (!tokenizer.ok()) return cli::fail(tokenizer.status());
  auto ids = tokenizer->encode(text, /*add_special=*/!no_bos, parse_special);
  if (!ids.ok()) return cli::fail(ids.status().with_context(file.empty() ? "text" : file));

  if (ids_only) {
    std::string line = "[";
    for (size_t i = 0; i < ids->size(); ++i) {
      if (i) line += ", ";
      line += std::to_string((*ids)[i]);
    }
    line += "]\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    return 0;
  }
  for (int32_t id : *ids) {
    // The piece's raw bytes, as llama.cpp prints them (may be part of a UTF-8 character).
    const std::string piece = tokenizer->token_to_piece(id);
    std::printf("%6d -> '", id);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::printf("'\n");
  }
  return 0;
}

}  // namespace sf
