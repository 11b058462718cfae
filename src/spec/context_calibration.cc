#include "spec/context_calibration.h"

#include <algorithm>
#include <unordered_map>

namespace sf {

std::vector<std::vector<int32_t>> calibrated_paths(const std::vector<int32_t>& prompt, size_t first,
                                                   const std::vector<std::vector<TokenProb>>& rows,
                                                   const CalibrationOptions& options) {
  std::vector<std::vector<int32_t>> paths;
  const size_t end = std::min(prompt.size(), first + rows.size());
  // Positions (with predictions) of every prompt token, ascending: the search step.
  std::unordered_map<int32_t, std::vector<size_t>> where;
  for (size_t i = first; i < end; ++i) where[prompt[i]].push_back(i);
  auto top = [&](size_t pos) -> const TokenProb* {
    const auto& row = rows[pos - first];
    return row.empty() || row[0].p < options.min_prob ? nullptr : &row[0];
  };
  for (size_t i = first; i < end; ++i) {
    const auto& row = rows[i - first];
    const size_t branches = std::min<size_t>(static_cast<size_t>(std::max(options.top_k, 0)), row.size());
    for (size_t b = 0; b < branches; ++b) {
      if (row[b].p < options.min_prob) break;
      if (i + 1 < prompt.size() && prompt[i + 1] == row[b].id) continue;
      const size_t from = i + 1 >= static_cast<size_t>(options.anchor) ? i + 1 - options.anchor : 0;
      std::vector<int32_t> path(prompt.begin() + static_cast<std::ptrdiff_t>(from),
                                prompt.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      path.push_back(row[b].id);
      size_t pos = i;
      for (int d = 1; d < options.depth; ++d) {
        auto it = where.find(path.back());
        if (it == where.end()) break;
        // The nearest occurrence after the current position, else the last one before it.
        const auto& occ = it->second;
        auto after = std::upper_bound(occ.begin(), occ.end(), pos);
        const size_t j = after != occ.end() ? *after : occ.back();
        const TokenProb* next = top(j);
        if (!next) break;
        path.push_back(next->id);
        pos = j;
      }
      paths.push_back(std::move(path));
    }
  }
  return paths;
}

}  // namespace sf
