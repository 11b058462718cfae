// specflash profile: measures the target's verification passes at this budget and storage
// and writes the latency profile LEVER's tree builder uses (--latency-profile), with a
// table of the pass time per row count, for chains and bushy ("star") trees of the same
// size, and optionally what dropping rows at an exit layer saves in the later layers.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/session_flags.h"
#include "engine/session.h"
#include "spec/verify_profiler.h"

namespace sf::cli {
int profile_command(int argc, char** argv) {
  CLI::App app{
      "Measure verification passes (1..max rows) of a model at a memory budget and storage rate, and\n"
      "write the latency profile that --spec lever reads with --latency-profile.",
      "specflash profile"};
  SessionFlags flags;
  flags.add_to(app, /*model_required=*/false);
  std::string out_path;
  int max_rows = 65, repeats = 3, tap_layer = 0;
  app.add_option("-o,--out", out_path, "write the profile as JSON to this file");
  app.add_option("--max-rows", max_rows, "largest verification batch measured (default 65 = 64 nodes + root)")
      ->check(CLI::Range(1, LatencyProfile::kMaxRows));
  app.add_option("--repeats", repeats, "timed passes per shape; the median is kept (default 3)")
      ->check(CLI::Range(1, 100));
  app.add_option("--prune-layer", tap_layer,
                 "also time passes of --max-rows rows that keep fewer rows after this layer (0: skip)");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  if (!flags.draft_path.empty() || (!flags.spec.empty() && flags.spec != "none"))
    return usage_error(Status::Error("profile measures the target alone; drop --draft/--spec"));
  flags.spec = "none";  // not the default (auto): the target alone
  auto options = flags.to_options();
  if (!options.ok()) return usage_error(options.status());
  if (options->n_ctx == 0) options->n_ctx = std::max(256, max_rows + 1);
  // With progress: a streamed model's loading line and the pack note, which matters here
  // most (a streamed profile from GGUF rows measures the row kernels, not the panels).
  auto session = create_session_with_progress(*options);
  if (!session.ok()) return fail(session.status());
  Session& s = **session;
  if (tap_layer < 0 || tap_layer >= s.model().hparams().n_layer)
    return usage_error(
        Status::Errorf("--prune-layer %d is outside the model (1..%d)", tap_layer, s.model().hparams().n_layer - 1));

  LatencyProfile profile;
  profile.set_key(s.profile_key());
  std::vector<int> rows = profile_row_counts(max_rows - 1, s.n_ctx());
  auto points = measure_verify_profile(s.target(), rows, repeats, /*with_star=*/true, &profile);
  if (!points.ok()) return fail(points.status());
  const bool emulated = s.streamer() && s.streamer()->emulated();
  std::printf("profile: %s; %s; %d threads%s\n", flags.model_path.c_str(), s.plan().describe().c_str(), s.pool().size(),
              emulated ? "; storage bandwidth EMULATED" : "");
  std::printf("| rows | chain ms | star ms | chain / 1 row |\n|---:|---:|---:|---:|\n");
  double one = 0;
  for (const ProfilePoint& p : *points)
    if (p.rows == 1 && p.shape == ProfileShape::kChain) one = p.seconds;
  for (const ProfilePoint& p : *points) {
    if (p.shape != ProfileShape::kChain) continue;
    double star = 0;
    for (const ProfilePoint& q : *points)
      if (q.rows == p.rows && q.shape == ProfileShape::kStar) star = q.seconds;
    std::printf("| %d | %.3f | %s | %.2f |\n", p.rows, p.seconds * 1e3,
                star > 0 ? std::to_string(star * 1e3).substr(0, 6).c_str() : "-", one > 0 ? p.seconds / one : 0);
  }
  if (tap_layer > 0) {
    const int n = rows.back();
    std::vector<int> kept;
    for (int k = n; k >= 1; k /= 2) kept.push_back(k);
    auto pruned = measure_pruned_passes(s.target(), n, tap_layer, kept, repeats);
    if (!pruned.ok()) return fail(pruned.status());
    std::printf("\nrows dropped after layer %d of %d (%d-row batch):\n", tap_layer, s.model().hparams().n_layer, n);
    std::printf("| rows kept | layers before ms | layers after ms | after / all kept |\n|---:|---:|---:|---:|\n");
    const double full = pruned->front().after_tap_seconds;
    for (const PrunedPassPoint& p : *pruned)
      std::printf("| %d | %.3f | %.3f | %.2f |\n", p.kept, p.before_tap_seconds * 1e3, p.after_tap_seconds * 1e3,
                  full > 0 ? p.after_tap_seconds / full : 0);
  }
  if (!out_path.empty()) {
    if (Status st = profile.save(out_path); !st.ok()) return fail(st);
    std::fprintf(stderr, "wrote %s\n", out_path.c_str());
  }
  return 0;
}

}  // namespace sf::cli
