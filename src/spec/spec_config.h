// Configuration of speculative decoding for a Session, and its statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace sf {

struct SpecConfig {
  enum class Method { kNone, kChain, kTree };
  Method method = Method::kNone;
  std::string draft_model_path;  // a GGUF with the target's vocabulary
  int draft_len = 4;             // chain: tokens per draft (gamma); tree: depth
  // Tree: children per node at each depth (e.g. {3, 2, 1}); empty = {2, 2, ..., 1}.
  std::vector<int> tree_widths;
  int draft_threads = 0;  // 0: share the target's pool

  bool enabled() const { return method != Method::kNone; }
  static const char* method_name(Method m);
};

// Children per node at each depth for a config: chain = {1} x draft_len; tree = the given
// widths, or {2} x (draft_len - 1) + {1}.
std::vector<int> tree_widths(const SpecConfig& config);
// Rejects sizes that are zero or absurd, with a message naming the flag.
Status validate_spec_config(const SpecConfig& config);
// Total nodes of a full tree with these widths.
int64_t tree_node_count(const std::vector<int>& widths);

struct SpecStats {
  uint64_t cycles = 0;                 // draft + verify rounds
  uint64_t draft_tokens = 0;           // tree nodes proposed
  uint64_t accepted_draft_tokens = 0;  // proposed nodes on accepted paths
  uint64_t rows_verified = 0;          // rows of verification batches (pending + nodes)
  uint64_t head_rows = 0;              // rows whose LM head was computed
  uint64_t head_rows_saved = 0;        // rows whose LM head was skipped (LEVER 4.4)
  double draft_seconds = 0;
  double verify_seconds = 0;
};

}  // namespace sf
