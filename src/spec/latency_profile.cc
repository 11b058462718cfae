#include "spec/latency_profile.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sf {
namespace {

// Weight of a new measurement once a cell has a few: recent cycles matter more (the page
// cache, thermal state and context length drift), but one outlier does not swing it.
constexpr double kEmaWeight = 0.2;
constexpr uint32_t kMeanSamples = 4;  // plain mean until then

// A measurement counts as at most this many times the cell's current value. Pass times on
// a shared machine are heavy-tailed (a streamed stories260K pass: ~1 ms in most cycles,
// 10-20 ms now and then, whatever its rows); with the EMA's weight alone one such outlier
// moved a cell 3-4x and, through the size bounds built on these cells, kept trees at one or
// two nodes for the rest of a run. A real rise still shows, by up to 1.2x per measurement.
constexpr double kOutlierFactor = 2.0;

void update(double& value, uint32_t& samples, double x) {
  if (samples > 0) x = std::min(x, kOutlierFactor * value);
  ++samples;
  const double w = samples <= kMeanSamples ? 1.0 / samples : kEmaWeight;
  value += w * (x - value);
}

}  // namespace

void LatencyProfile::clear() {
  for (auto& bucket : verify_) bucket.fill(Cell{});
  measured_cells_.fill(0);
  clear_draft();
}

void LatencyProfile::clear_draft() {
  draft_row_seconds_ = draft_pass_seconds_ = 0;
  draft_samples_ = draft_row_samples_ = 0;
}

int LatencyProfile::context_bucket(int context) {
  if (context < 512) return 0;
  if (context < 2048) return 1;
  if (context < 8192) return 2;
  return 3;
}

bool LatencyProfile::has_verify_data() const {
  for (int n : measured_cells_)
    if (n > 0) return true;
  return false;
}

int LatencyProfile::nearest_measured_bucket(int context) const {
  const int want = context_bucket(context);
  for (int d = 0; d < kContextBuckets; ++d)
    for (int b : {want + d, want - d})
      if (b >= 0 && b < kContextBuckets && measured_cells_[b] > 0) return b;
  return -1;
}

void LatencyProfile::observe_verify(int rows, int context, double seconds) {
  if (rows < 1 || seconds <= 0) return;
  const int bucket = context_bucket(context);
  Cell& c = verify_[bucket][std::min(rows, kMaxRows)];
  if (c.samples == 0) ++measured_cells_[bucket];
  update(c.seconds, c.samples, seconds);
}

double LatencyProfile::marginal_seconds(int rows, int context) const {
  rows = std::clamp(rows, 1, kMaxRows);
  // The bucket verify_seconds() reads.
  const int bucket = nearest_measured_bucket(context);
  if (bucket < 0) return 0;
  auto fit = [&](int lo, int hi, double* slope) {
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    int points = 0;
    for (int r = std::max(1, lo); r <= std::min(kMaxRows, hi); ++r) {
      const Cell& c = verify_[bucket][r];
      if (c.samples == 0) continue;
      const double w = c.samples;
      sw += w;
      sx += w * r;
      sy += w * c.seconds;
      sxx += w * r * r;
      sxy += w * r * c.seconds;
      ++points;
    }
    const double den = sw * sxx - sx * sx;
    if (points < 2 || den <= 0) return false;
    *slope = std::max(0.0, (sw * sxy - sx * sy) / den);
    return true;
  };
  double slope = 0;
  if (fit(rows / 4, rows * 4, &slope) || fit(1, kMaxRows, &slope)) return slope;
  return 0;
}

uint32_t LatencyProfile::verify_samples(int rows, int context) const {
  if (rows < 1 || rows > kMaxRows) return 0;
  return verify_[context_bucket(context)][rows].samples;
}

void LatencyProfile::observe_draft(int rows, double seconds) {
  if (rows < 1 || seconds <= 0) return;
  // Split a pass into a fixed part and a per-row part from passes of different sizes:
  // single-row passes estimate the fixed part, larger ones the per-row increment.
  if (draft_pass_seconds_ > 0) seconds = std::min(seconds, kOutlierFactor * rows * draft_pass_seconds_);
  const auto weight = [](uint64_t samples) {
    return samples <= kMeanSamples ? 1.0 / static_cast<double>(samples) : kEmaWeight;
  };
  if (rows == 1) {
    ++draft_samples_;
    draft_pass_seconds_ += weight(draft_samples_) * (seconds - draft_pass_seconds_);
    // Until a multi-row pass shows the per-row part, a row costs at most a whole pass, and
    // the estimate follows the passes. It used to take the first pass for good: the first
    // draft of a prompt (which catches the draft model up on it, ~10x a step), and since a
    // shallow tree drafts one node a pass, nothing corrected it: 206 us a row against ~15 us
    // passes kept LEVER's trees at 1.4-3 nodes (0.6-0.8x chain:8 at 0% and 25%, 2026-12-05).
    if (draft_row_samples_ == 0) draft_row_seconds_ = draft_pass_seconds_;
  } else {
    ++draft_row_samples_;
    const double per_row = std::max(seconds - draft_pass_seconds_, seconds * 0.25) / rows;
    draft_row_seconds_ += weight(draft_row_samples_) * (per_row - draft_row_seconds_);
    if (draft_pass_seconds_ == 0) draft_pass_seconds_ = seconds / rows;
  }
}

double LatencyProfile::estimate(int bucket, int rows) const {
  const auto& cells = verify_[bucket];
  int lo = -1, lo2 = -1, hi = -1;
  double max_below = 0;
  for (int r = 1; r <= kMaxRows; ++r) {
    if (cells[r].samples == 0) continue;
    if (r <= rows) {
      lo2 = lo;
      lo = r;
      max_below = std::max(max_below, cells[r].seconds);
    } else {
      hi = r;
      break;
    }
  }
  double value;
  if (lo == rows) {
    value = cells[rows].seconds;
  } else if (lo > 0 && hi > 0) {
    const double t = static_cast<double>(rows - lo) / (hi - lo);
    value = cells[lo].seconds + t * (cells[hi].seconds - cells[lo].seconds) * (1 + kUnseenPenalty);
  } else if (lo > 0) {
    // Beyond the largest measured shape: continue the last measured slope (or, from one
    // point, assume cost proportional to rows past it, the pessimistic case).
    const double slope =
        lo2 > 0 ? std::max(0.0, (cells[lo].seconds - cells[lo2].seconds) / (lo - lo2)) : cells[lo].seconds / lo;
    value = cells[lo].seconds + slope * (rows - lo) * (1 + kUnseenPenalty);
  } else {
    value = cells[hi].seconds;  // smaller than anything measured: at most that
  }
  return std::max(value, max_below);
}

double LatencyProfile::verify_seconds(int rows, int context) const {
  rows = std::clamp(rows, 1, kMaxRows);
  const int bucket = nearest_measured_bucket(context);
  if (bucket < 0) return 0;
  return estimate(bucket, rows) * (bucket == context_bucket(context) ? 1.0 : 1 + kUnseenPenalty);
}

std::string LatencyProfile::to_json() const {
  nlohmann::json j;
  j["key"] = {
      {"model", key_.model}, {"budget", key_.budget}, {"io_bandwidth", key_.io_bandwidth}, {"threads", key_.threads}};
  nlohmann::json verify = nlohmann::json::array();
  for (int b = 0; b < kContextBuckets; ++b)
    for (int r = 1; r <= kMaxRows; ++r)
      if (verify_[b][r].samples > 0)
        verify.push_back({{"context_bucket", b},
                          {"rows", r},
                          {"seconds", verify_[b][r].seconds},
                          {"samples", verify_[b][r].samples}});
  j["verify"] = verify;
  j["draft"] = {{"row_seconds", draft_row_seconds_}, {"pass_seconds", draft_pass_seconds_}};
  return j.dump(1);
}

Result<LatencyProfile> LatencyProfile::from_json(const std::string& text, const std::string& source_name) {
  LatencyProfile p;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    const auto& k = j.at("key");
    p.key_.model = k.at("model").get<std::string>();
    p.key_.budget = k.at("budget").get<std::string>();
    p.key_.io_bandwidth = k.at("io_bandwidth").get<double>();
    p.key_.threads = k.at("threads").get<int>();
    for (const auto& e : j.at("verify")) {
      const int b = e.at("context_bucket").get<int>(), r = e.at("rows").get<int>();
      const double s = e.at("seconds").get<double>();
      if (b < 0 || b >= kContextBuckets || r < 1 || r > kMaxRows || !(s > 0))
        return Status::Errorf("%s: verify entry out of range (bucket %d, rows %d, seconds %g)", source_name.c_str(), b,
                              r, s);
      if (p.verify_[b][r].samples == 0) ++p.measured_cells_[b];
      p.verify_[b][r] = Cell{s, std::max(1u, e.value("samples", 1u))};
    }
    if (j.contains("draft")) {
      p.draft_row_seconds_ = j["draft"].value("row_seconds", 0.0);
      p.draft_pass_seconds_ = j["draft"].value("pass_seconds", 0.0);
      if (p.draft_row_seconds_ > 0) p.draft_samples_ = p.draft_row_samples_ = kMeanSamples;
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Errorf("%s: not a latency profile (%s); write one with `specflash profile`", source_name.c_str(),
                          e.what());
  }
  return p;
}

Status LatencyProfile::save(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << to_json() << "\n";
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      return Status::Errorf("%s: cannot write the latency profile", path.c_str());
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::Errorf("%s: cannot write the latency profile", path.c_str());
  }
  return Status::Ok();
}

Result<LatencyProfile> LatencyProfile::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status::Errorf("%s: cannot open the latency profile", path.c_str());
  std::stringstream ss;
  ss << f.rdbuf();
  return from_json(ss.str(), path);
}

}  // namespace sf
