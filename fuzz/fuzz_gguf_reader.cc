// libFuzzer target: sf::fuzz::gguf_reader (see tests/robustness/fuzz_entry_points.h for the input format).
#include "fuzz_main.h"

SPECFLASH_FUZZ_TARGET(gguf_reader)
