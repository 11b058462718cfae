// specflash distill: train a small draft model that agrees with a target (src/train).
#pragma once

namespace sf::cli {
int distill_command(int argc, char** argv);
}  // namespace sf::cli
