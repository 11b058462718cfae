// LatencyProfile: what a verification pass and a draft expansion cost on this machine,
// for this model, budget and storage, as the tree builders need it (LEVER 4.2, eq. 4).
//
// Verification: seconds of one target pass (after compute/I-O overlap, acceptance walk
// included) as a function of the rows in the batch, per context-length bucket. Seeded by
// measured passes (`specflash profile` writes them as JSON; a session without a profile
// file measures a few shapes at start-up) and refined online by every cycle (an EMA per
// observed row count). Unseen row counts are interpolated between the nearest observed
// ones, or extrapolated from the last slope, with the unmeasured increment over the
// nearest measured shape inflated by a conservative penalty (inflating the whole value
// would make the step into every unmeasured count look expensive); the estimate never
// decreases with the row count. Leaves do not enter the key: in this
// engine a leaf costs nothing beyond its row (no per-branch KV copies, unlike the paper's
// NPU runtime), which `specflash profile` shows by measuring chains and bushy trees of
// equal size.
//
// Draft: seconds per drafted row (moving average of batched expansions) and per draft
// pass (the fixed part), from the drafter's counters.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace sf {

class LatencyProfile {
 public:
  static constexpr int kMaxRows = 512;
  static constexpr int kContextBuckets = 4;  // < 512, < 2048, < 8192, more
  // Inflation of the unmeasured part of estimates (and of other context buckets' data).
  static constexpr double kUnseenPenalty = 0.10;

  // What the profile was measured for; a profile for another key is not used.
  struct Key {
    std::string model;  // file name and size
    std::string budget;
    double io_bandwidth = 0;
    int threads = 0;
    bool operator==(const Key& o) const {
      return model == o.model && budget == o.budget && io_bandwidth == o.io_bandwidth && threads == o.threads;
    }
  };

  LatencyProfile() { clear(); }
  void clear();
  const Key& key() const { return key_; }
  void set_key(Key key) { key_ = std::move(key); }

  bool has_verify_data() const;
  // Estimated seconds of a verification pass over `rows` rows at `context` committed tokens.
  double verify_seconds(int rows, int context) const;
  void observe_verify(int rows, int context, double seconds);
  // The cost of one more row at `rows` rows: the least-squares slope of the measured
  // cells within [rows/4, 4*rows] (weighted by their samples; all cells when that range
  // has fewer than two), never negative. Single cells are noisy on a shared machine; a
  // slope from neighbouring differences would swing with that noise, a local fit does not.
  double marginal_seconds(int rows, int context) const;
  // Measurements behind the estimate at exactly `rows` rows (0: interpolated).
  uint32_t verify_samples(int rows, int context) const;

  double draft_row_seconds() const { return draft_row_seconds_; }
  double draft_pass_seconds() const { return draft_pass_seconds_; }
  // A draft pass over `rows` rows took `seconds`.
  void observe_draft(int rows, double seconds);
  // Forgets the draft costs and keeps the verification measurements (a profile copied to a
  // builder that drafts from another source).
  void clear_draft();

  // JSON: {"key": {...}, "verify": [{"context_bucket": b, "rows": r, "seconds": s, "samples": n}, ...],
  //        "draft": {"row_seconds": .., "pass_seconds": ..}}
  std::string to_json() const;
  static Result<LatencyProfile> from_json(const std::string& text, const std::string& source_name);
  Status save(const std::string& path) const;
  static Result<LatencyProfile> load(const std::string& path);

  static int context_bucket(int context);

 private:
  struct Cell {
    double seconds = 0;
    uint32_t samples = 0;
  };
  double estimate(int bucket, int rows) const;
  // The context bucket the estimates for `context` read: the nearest with a measured cell,
  // preferring longer contexts (they cost more: conservative); -1 when none has one.
  int nearest_measured_bucket(int context) const;

  Key key_;
  std::array<std::array<Cell, kMaxRows + 1>, kContextBuckets> verify_;
  // Cells with samples, per bucket: the tree builders ask for estimates once per node they
  // add, and finding the bucket by scanning its 512 cells was ~2% of the speculative loop's
  // CPU samples on stories260K (perf: 1.8% at the phone preset's 0%, 0.6% after; 1.9% with
  // auto's retrieval arm forced at 100%).
  std::array<int, kContextBuckets> measured_cells_{};
  double draft_row_seconds_ = 0;
  double draft_pass_seconds_ = 0;
  uint64_t draft_samples_ = 0;      // single-row draft passes seen
  uint64_t draft_row_samples_ = 0;  // multi-row draft passes seen
};

}  // namespace sf
