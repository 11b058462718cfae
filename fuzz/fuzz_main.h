// The libFuzzer glue shared by every fuzz target: init() with the repository and shared/
// folders (SPECFLASH_SHARED_DIR in the environment overrides the configured one), then one
// entry point of tests/robustness/fuzz_entry_points.h per input.
#pragma once

#include <cstdlib>

#include "fuzz_entry_points.h"

#define SPECFLASH_FUZZ_TARGET(entry)                                                                    \
  extern "C" int LLVMFuzzerInitialize(int*, char***) {                                                  \
    const char* shared = std::getenv("SPECFLASH_SHARED_DIR");                                           \
    sf::fuzz::init(SPECFLASH_SOURCE_DIR, shared != nullptr && *shared ? shared : SPECFLASH_SHARED_DIR); \
    return 0;                                                                                           \
  }                                                                                                     \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {                             \
    sf::fuzz::entry(data, size);                                                                        \
    return 0;                                                                                           \
  }
