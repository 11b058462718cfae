#include "spec/draft_reuse.h"

#include <algorithm>

namespace sf {

std::vector<int32_t> DraftReuse::select(const TokenTree& tree, const std::vector<int32_t>& accepted,
                                        const std::function<int32_t(int32_t node)>& target_argmax) const {
  // The rejected chain: the first child (the builder's best) below the last accepted node,
  // then first children down to a leaf.
  std::vector<int32_t> chain;
  int32_t at = accepted.empty() ? TokenTree::kRoot : accepted.back();
  while (!tree.children(at).empty() && static_cast<int>(chain.size()) < options_.max_rows) {
    at = tree.children(at).front();
    chain.push_back(at);
  }
  if (chain.size() < 2) return {};
  std::vector<int32_t> predicted(chain.size());
  for (size_t i = 0; i < chain.size(); ++i) predicted[i] = target_argmax(chain[i]);
  // Longest run [m, n] with predicted[i] == token(chain[i + 1]) for m <= i < n.
  size_t best_m = 0, best_len = 0, m = 0;
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    if (predicted[i] != tree.node(chain[i + 1]).token) {
      m = i + 1;
      continue;
    }
    if (i + 1 - m > best_len) {
      best_len = i + 1 - m;
      best_m = m;
    }
  }
  if (best_len == 0) return {};
  std::vector<int32_t> segment;
  for (size_t i = best_m; i <= best_m + best_len; ++i) segment.push_back(tree.node(chain[i]).token);
  segment.push_back(predicted[best_m + best_len]);
  return segment;
}

bool DraftReuse::keep(std::vector<int32_t> segment) {
  if (segment.empty()) return false;
  for (const Segment& s : segments_)
    if (s.tokens == segment) return false;
  segments_.push_back({std::move(segment), 0, 0});
  if (static_cast<int>(segments_.size()) > options_.max_segments) segments_.erase(segments_.begin());
  return true;
}

bool DraftReuse::age(int64_t drafted) {
  for (Segment& s : segments_) {
    ++s.cycles;
    s.drafted_since += drafted;
  }
  const size_t before = segments_.size();
  segments_.erase(
      std::remove_if(segments_.begin(), segments_.end(),
                     [&](const Segment& s) { return s.cycles >= 1 && s.drafted_since > options_.lifetime_tokens; }),
      segments_.end());
  return segments_.size() != before;
}

}  // namespace sf
