// Measures verification passes of chosen shapes on a target, to seed a LatencyProfile
// (`specflash profile`, and sessions that need a profile and were given none).
//
// A pass over `rows` rows is timed as the engine runs it: all layers (streamed ones
// included, with their I/O overlap) and the LM head for one row, at cells after the
// committed sequence (nothing is committed; the cache is left as it was). Two shapes show
// whether the tree's shape matters beyond its row count: a chain (each row sees all
// before it) and a star (every row a child of the first).
// Not thread-safe (uses the runner).
#pragma once

#include <vector>

#include "base/status.h"
#include "spec/latency_profile.h"
#include "spec/model_runner.h"

namespace sf {

enum class ProfileShape { kChain, kStar };

struct ProfilePoint {
  int rows = 0;
  ProfileShape shape = ProfileShape::kChain;
  double seconds = 0;  // median of the repeats
};

// Times each row count (repeats each, after one untimed warm-up pass) and records the
// chain timings into `profile` (context bucket of the runner's n_past).
Result<std::vector<ProfilePoint>> measure_verify_profile(ModelRunner& target, const std::vector<int>& rows, int repeats,
                                                         bool with_star, LatencyProfile* profile);

// Passes over a chain of `rows` rows that keep only `kept` rows after layer tap_layer, for
// each kept count: what dropping rows saves in the later layers (median of repeats).
struct PrunedPassPoint {
  int rows = 0, kept = 0;
  double before_tap_seconds = 0, after_tap_seconds = 0, total_seconds = 0;
};
Result<std::vector<PrunedPassPoint>> measure_pruned_passes(ModelRunner& target, int rows, int tap_layer,
                                                           const std::vector<int>& kept_counts, int repeats);

// Row counts worth measuring for trees of up to max_nodes nodes: 1, 2, 4, ... and max+1.
std::vector<int> profile_row_counts(int max_nodes, int n_ctx_room);

}  // namespace sf
