// libFuzzer target: sf::fuzz::tokenizer (see tests/robustness/fuzz_entry_points.h for the input format).
#include "fuzz_main.h"

SPECFLASH_FUZZ_TARGET(tokenizer)
