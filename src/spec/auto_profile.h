// AutoProfile: what `--spec auto` learnt about this machine, model pair, budget and storage,
// kept between runs so that a later run starts where the last one left off instead of
// trying every arm again.
//
// Why: a fresh session pays to measure each arm (a few cycles each, plus the draft model's
// catch-up), and within one session it cannot tell near arms apart (docs/auto.md: ~200
// cycles could not tell LEVER's 6.4 tokens per cycle from EdgeLLM's 5.5). Evidence that
// carries over removes the first cost and accumulates the second.
//
// What is kept: each arm's lasting evidence (ArmSelector, decayed sums over its last ~200
// cycles) by the arm's name; for an arm that prunes, the lasting evidence of its pruning
// switch's two settings (MeasuredSwitch, per block of cycles) as "<arm>/prune" and
// "<arm>/no-prune"; and the draft's catch-up seconds per token. What is not: the arms' own
// tree-shaping state (LEVER's latency profile has its own file, --latency-profile;
// calibrations re-learn within a few cycles).
//
// The key names everything the evidence depends on (the model files, budget, storage rate,
// threads, host and the arms); a file whose key differs is not used. Files live in one
// directory, one per key (the file name is a hash of the key), written atomically, so two
// processes never see half a file (the last writer wins).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "spec/arm_selector.h"

namespace sf {

struct AutoProfile {
  static constexpr int kFormatVersion = 1;
  std::string key;
  int64_t generations = 0;  // generations that updated it (for the user's information)
  double catch_up_seconds_per_token = 0;
  std::vector<std::pair<std::string, ArmEvidence>> arms;  // by arm name

  // The evidence kept for an arm, or null.
  const ArmEvidence* find(const std::string& arm) const;

  std::string to_json() const;
  // An error names the file and what is wrong (not JSON, another format version, a field
  // missing or out of range).
  static Result<AutoProfile> from_json(const std::string& text, const std::string& source_name);
  // Atomically (a temporary renamed over path), without fsync: a crash may lose the last
  // update, or leave a damaged file, which load() refuses (a fresh start).
  Status save(const std::string& path) const;
  static Result<AutoProfile> load(const std::string& path);
};

// The file for `key` in `directory`.
std::string auto_profile_path(const std::string& directory, const std::string& key);

// Where runs keep their profiles by default: $XDG_CACHE_HOME/specflash/auto, else
// $HOME/.cache/specflash/auto; empty when neither variable is set to an absolute path.
std::string default_auto_profile_directory();

}  // namespace sf
