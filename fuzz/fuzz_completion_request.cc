// libFuzzer target: sf::fuzz::completion_request (see tests/robustness/fuzz_entry_points.h for the input format).
#include "fuzz_main.h"

SPECFLASH_FUZZ_TARGET(completion_request)
