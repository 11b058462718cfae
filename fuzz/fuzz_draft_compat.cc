// libFuzzer target: sf::fuzz::draft_compat (see tests/robustness/fuzz_entry_points.h for the input format).
#include "fuzz_main.h"

SPECFLASH_FUZZ_TARGET(draft_compat)
