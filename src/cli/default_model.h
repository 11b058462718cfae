// Where the embedded default model (stories260K) lives relative to the executable, so
// `specflash run` works without -m from a fresh clone (build/specflash) and after
// `cmake --install` (PREFIX/share/specflash/stories260K.gguf).
#pragma once

#include <string>

namespace sf::cli {
std::string default_model_path();
}  // namespace sf::cli
