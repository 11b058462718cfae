// In-context distribution calibration (CoordGen 3.3): the prefill has already computed the
// target's next-token distribution after every prompt position; those predictions say how
// the model itself would continue the context, which often differs lexically from the
// context's own next token. For each position, the target's likely next tokens (sample)
// start a calibrated path; the path continues by finding the predicted token elsewhere in
// the prompt (search) and taking the target's top prediction there, depth-first, until the
// depth or the probability floor ends it. Each path, prefixed by `anchor` context tokens
// ending at its position, becomes one document of the calibration source, so a draft below
// those context tokens can follow the model's wording instead of the context's.
#pragma once

#include <cstdint>
#include <vector>

#include "sampling/sampler.h"

namespace sf {

struct CalibrationOptions {
  int top_k = 2;           // predictions per position that start a path (the prefill keeps this many)
  int depth = 4;           // calibrated tokens per path
  float min_prob = 0.10f;  // predictions below this probability start or continue no path
  int anchor = 2;          // context tokens before the calibrated ones
};

// rows[i]: the target's top tokens after prompt[first + i], by descending probability.
// Paths whose first prediction equals the context's own next token are skipped: the live
// source already has them.
std::vector<std::vector<int32_t>> calibrated_paths(const std::vector<int32_t>& prompt, size_t first,
                                                   const std::vector<std::vector<TokenProb>>& rows,
                                                   const CalibrationOptions& options);

}  // namespace sf
