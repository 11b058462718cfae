// `specflash --version`: what a bug report needs to identify the build.
#pragma once

#include <string>

namespace sf::cli {
// "specflash 0.1.0\ncommit: ...\nbuild type: ...\nSIMD targets: ..." (several lines).
std::string version_text();
}  // namespace sf::cli
