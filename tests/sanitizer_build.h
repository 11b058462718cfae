// Whether the tests are built with a sanitizer (-DSPECFLASH_SANITIZE, or the fuzz build's
// ASan+UBSan). Such a build measures some things wrongly for what a few tests assert about
// the machine rather than about correctness: RSS includes the sanitizer's shadow memory,
// and compute is 2-15 times slower, so the cost models that weigh compute against I/O time
// decide differently. Those assertions are skipped there, saying why (docs/robustness.md).
#pragma once

namespace sf::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

}  // namespace sf::test
