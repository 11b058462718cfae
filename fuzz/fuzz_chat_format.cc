// libFuzzer target: sf::fuzz::chat_format (see tests/robustness/fuzz_entry_points.h for the input format).
#include "fuzz_main.h"

SPECFLASH_FUZZ_TARGET(chat_format)
