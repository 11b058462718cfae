// Draft reuse (CoordGen 3.4): a rejected draft often carries the right words in a slightly
// wrong place (a token missing before them, or a synonym). After a rejection the target has
// already run the rejected rows, so its predictions there are one LM-head row each away.
// The kept segment is the longest run of the rejected chain (the first-child path below the
// node where the walk stopped) in which every token is the target's own prediction at the
// previous draft token's row, plus the target's prediction after the run. A segment lives
// at least one cycle and is dropped once the drafts proposed since it was kept exceed
// lifetime_tokens; while it lives, the retrieval drafter offers it as one more source (its
// start below the root and below nodes where nothing else matches, and its continuation
// wherever the path matches inside it).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "spec/token_tree.h"

namespace sf {

struct ReuseOptions {
  int lifetime_tokens = 48;  // drafted tokens after which a segment is dropped
  int max_segments = 4;
  int max_rows = 8;  // rejected rows whose predictions are asked for per cycle
};

class DraftReuse {
 public:
  explicit DraftReuse(const ReuseOptions& options = {}) : options_(options) {}
  void clear() { segments_.clear(); }

  // The reusable segment of this cycle's rejection (empty if none: at least two draft tokens
  // must agree with the target's predictions). Asks target_argmax for at most max_rows rows.
  std::vector<int32_t> select(const TokenTree& tree, const std::vector<int32_t>& accepted,
                              const std::function<int32_t(int32_t node)>& target_argmax) const;
  // Keeps a segment (the oldest goes beyond max_segments). Returns true if kept.
  bool keep(std::vector<int32_t> segment);
  // A cycle proposed `drafted` tokens; returns true if a segment expired.
  bool age(int64_t drafted);

  struct Segment {
    std::vector<int32_t> tokens;
    int cycles = 0;
    int64_t drafted_since = 0;
  };
  const std::vector<Segment>& segments() const { return segments_; }

 private:
  ReuseOptions options_;
  std::vector<Segment> segments_;
};

}  // namespace sf
