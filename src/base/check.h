// SF_CHECK: aborts with file/line when an internal invariant is broken. Never used for
// conditions a user can cause (bad files, bad flags); those return Status.
#pragma once

#include <cstdio>
#include <cstdlib>

#define SF_CHECK(cond, ...)                                                                                    \
  do {                                                                                                         \
    if (!(cond)) {                                                                                             \
      std::fprintf(stderr, "specflash: internal error at %s:%d: check failed: %s", __FILE__, __LINE__, #cond); \
      __VA_OPT__(std::fprintf(stderr, " - "); std::fprintf(stderr, __VA_ARGS__);)                              \
      std::fprintf(stderr, "\n");                                                                              \
      std::abort();                                                                                            \
    }                                                                                                          \
  } while (0)
