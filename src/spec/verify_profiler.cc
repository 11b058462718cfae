#include "spec/verify_profiler.h"

#include <algorithm>

#include "base/timer.h"

namespace sf {
namespace {

ForwardBatch shaped_batch(int rows, ProfileShape shape, int32_t n_past, int32_t token) {
  ForwardBatch b;
  b.n_kv = n_past + rows;
  b.mask.assign(static_cast<size_t>(rows) * b.n_kv, 0);
  for (int r = 0; r < rows; ++r) {
    b.tokens.push_back(token);
    const bool chain = shape == ProfileShape::kChain;
    b.positions.push_back(n_past + (chain ? r : std::min(r, 1)));
    b.kv_cells.push_back(n_past + r);
    uint8_t* m = b.mask.data() + static_cast<size_t>(r) * b.n_kv;
    for (int32_t c = 0; c < n_past; ++c) m[c] = 1;
    if (chain) {
      for (int c = 0; c <= r; ++c) m[n_past + c] = 1;
    } else {
      m[n_past] = 1;
      m[n_past + r] = 1;
    }
  }
  return b;
}

}  // namespace

std::vector<int> profile_row_counts(int max_nodes, int room) {
  std::vector<int> rows;
  const int top = std::min(max_nodes + 1, room);
  for (int r = 1; r < top; r *= 2) rows.push_back(r);
  if (top >= 1 && (rows.empty() || rows.back() != top)) rows.push_back(top);
  return rows;
}

Result<std::vector<ProfilePoint>> measure_verify_profile(ModelRunner& target, const std::vector<int>& rows, int repeats,
                                                         bool with_star, LatencyProfile* profile) {
  std::vector<ProfilePoint> points;
  const int32_t n_past = target.n_past();
  std::vector<float> logits(static_cast<size_t>(target.hparams().n_vocab));
  const int32_t token = std::min(1, target.hparams().n_vocab - 1);
  auto pass = [&](int r, ProfileShape shape) -> Result<double> {
    Stopwatch timer;
    SF_RETURN_IF_ERROR(target.forward(shaped_batch(r, shape, n_past, token)));
    SF_RETURN_IF_ERROR(target.begin_head());
    target.row_logits(0, logits.data());
    target.end_head();
    return timer.elapsed();
  };
  if (rows.empty()) return points;
  SF_RETURN_IF_ERROR(pass(1, ProfileShape::kChain).status());  // warm-up
  // Repeats go round-robin over the shapes, so a burst of load elsewhere on the machine
  // spreads over all of them instead of inflating one (a skewed seed can stop a cost
  // model from ever trying a shape).
  struct Shape {
    int rows;
    ProfileShape shape;
    std::vector<double> seconds;
  };
  std::vector<Shape> shapes;
  for (int r : rows) {
    if (n_past + r > target.n_ctx()) break;
    shapes.push_back({r, ProfileShape::kChain, {}});
    if (with_star && r >= 3) shapes.push_back({r, ProfileShape::kStar, {}});
  }
  for (int i = 0; i < std::max(1, repeats); ++i)
    for (Shape& sh : shapes) {
      SF_ASSIGN_OR_RETURN(double s, pass(sh.rows, sh.shape));
      sh.seconds.push_back(s);
    }
  for (Shape& sh : shapes) {
    std::sort(sh.seconds.begin(), sh.seconds.end());
    const double median = sh.seconds[sh.seconds.size() / 2];
    points.push_back({sh.rows, sh.shape, median});
    if (profile && sh.shape == ProfileShape::kChain) profile->observe_verify(sh.rows, n_past, median);
  }
  return points;
}

Result<std::vector<PrunedPassPoint>> measure_pruned_passes(ModelRunner& target, int rows, int tap_layer,
                                                           const std::vector<int>& kept_counts, int repeats) {
  std::vector<PrunedPassPoint> out;
  const int32_t n_past = target.n_past();
  if (n_past + rows > target.n_ctx()) return Status::Errorf("%d rows do not fit the context", rows);
  const ForwardBatch batch =
      shaped_batch(rows, ProfileShape::kChain, n_past, std::min(1, target.hparams().n_vocab - 1));
  for (int kept : kept_counts) {
    kept = std::clamp(kept, 1, rows);
    // The first `kept` rows of a chain: every kept row's ancestors are kept, as in pruning.
    std::vector<int64_t> keep(static_cast<size_t>(kept));
    for (int i = 0; i < kept; ++i) keep[i] = i;
    LayerTap tap;
    tap.layer = tap_layer;
    tap.fn = [&](const float*, const std::vector<int64_t>&, std::vector<int64_t>* k) {
      *k = keep;
      return Status::Ok();
    };
    std::vector<PassTiming> t;
    SF_RETURN_IF_ERROR(target.forward(batch, &tap));  // warm-up
    for (int i = 0; i < std::max(1, repeats); ++i) {
      SF_RETURN_IF_ERROR(target.forward(batch, &tap));
      t.push_back(target.last_pass());
    }
    std::sort(t.begin(), t.end(),
              [](const PassTiming& a, const PassTiming& b) { return a.after_tap_seconds < b.after_tap_seconds; });
    const PassTiming& m = t[t.size() / 2];
    out.push_back({rows, kept, m.before_tap_seconds, m.after_tap_seconds,
                   m.before_tap_seconds + m.tap_seconds + m.after_tap_seconds});
  }
  return out;
}

}  // namespace sf
