// specflash pack: rewrite a GGUF model so each layer is one contiguous, 4096-aligned range
// (see convert/model_packer.h). Same conventions as the other subcommands (commands.h).
#pragma once

namespace sf::cli {
int pack_command(int argc, char** argv);
}  // namespace sf::cli
