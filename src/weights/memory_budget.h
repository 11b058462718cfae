// Parsing of --mem-budget and --io-bandwidth values.
//
// --mem-budget is either an absolute byte count for the whole footprint ("300M", "2G",
// "1.5GiB", "123456") or a share of the model ("25%"): the share of the layer matrices to
// pin in DRAM, the rest of the footprint (embeddings, norms, the LM head, KV cache, scratch,
// stream buffers) coming on top. Memory sizes use
// binary units (M = MiB). --io-bandwidth is a rate in decimal units, as flash is specified
// ("2G" = 2e9 bytes/s).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sf {

struct MemoryBudget {
  enum class Kind { kUnlimited, kBytes, kModelShare };
  Kind kind = Kind::kUnlimited;
  uint64_t bytes = 0;  // kBytes
  double share = 1.0;  // kModelShare, in [0, 1]

  // "" or "100%" or "unlimited" -> everything resident.
  static Result<MemoryBudget> parse(std::string_view text);
  std::string to_string() const;
};

// Bytes per second from "4G", "2.5G", "800M", "0" (0 = unlimited).
Result<double> parse_bandwidth(std::string_view text);
std::string format_bytes(uint64_t bytes);  // "607.3 MiB"

}  // namespace sf
