// FNV-1a (64-bit): the project's hash for file checksums and model/data fingerprints.
// Not cryptographic; it catches bit flips and truncation, not deliberate tampering.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sf {

constexpr uint64_t kFnv1aSeed = 0xcbf29ce484222325ull;

// Hash of n bytes, continuing from h (pass a previous result to hash several pieces).
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnv1aSeed) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace sf
