// Where the embedded default model (stories260K) lives relative to the executable, so
// `build/specflash run` works from a fresh clone without -m.
#pragma once

#include <string>

namespace sf::cli {
std::string default_model_path();
}
