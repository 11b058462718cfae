// create_session_with_progress (declared in session_flags.h): the waits a user would
// otherwise sit through in silence.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/timer.h"
#include "cli/session_flags.h"
#include "engine/pack_hint.h"
#include "weights/memory_budget.h"

namespace sf::cli {
namespace {

// Files this large can take a second or more to read, plan and drop from the page cache
// (a cold disk, a streamed model's planning reads); smaller ones load in a blink.
constexpr uintmax_t kAnnounceLoadBytes = 64ull << 20;
// A forward pass slower than this gets a warning before generation starts.
constexpr double kSlowPassSeconds = 5.0;

}  // namespace

Result<std::unique_ptr<Session>> create_session_with_progress(SessionOptions options) {
  const bool tty = isatty(fileno(stderr));
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(options.model_path, ec);
  const bool announce = !ec && size >= kAnnounceLoadBytes;
  if (announce) {
    std::fprintf(stderr, "loading %s (%s)...%s", options.model_path.c_str(), format_bytes(size).c_str(),
                 tty ? "" : "\n");
    std::fflush(stderr);
  }
  if (!options.prefill_progress) {
    // Silent for prefills that finish within a second; then one line per second (a
    // terminal's line rewrites itself) and a last line when done.
    struct State {
      Stopwatch since_start, since_line;
      bool shown = false;
    };
    auto state = std::make_shared<State>();
    options.prefill_progress = [tty, state](int64_t done, int64_t total) {
      if (done == 0) {
        *state = State();
        return;
      }
      const bool last = done == total;
      if (state->since_start.elapsed() < 1.0 || (!last && state->shown && state->since_line.elapsed() < 1.0)) return;
      state->shown = true;
      state->since_line.reset();
      std::fprintf(stderr, "%sprefill: %lld/%lld prompt tokens, %.1f s%s", tty ? "\r\033[K" : "",
                   static_cast<long long>(done), static_cast<long long>(total), state->since_start.elapsed(),
                   tty && !last ? "" : "\n");
      std::fflush(stderr);
    };
  }
  Stopwatch timer;
  auto session = Session::create(options);
  if (announce && session.ok()) std::fprintf(stderr, "%sloaded in %.1f s\n", tty ? " " : "", timer.elapsed());
  if (announce && !session.ok() && tty) std::fputc('\n', stderr);
  if (!session.ok()) return session;
  const Session& s = **session;
  if (s.streamer() != nullptr && options.io_bandwidth > 0) {
    const double pass_seconds = static_cast<double>(s.plan().streamed_bytes_per_pass) / options.io_bandwidth;
    if (pass_seconds > kSlowPassSeconds)
      std::fprintf(stderr,
                   "warning: --io-bandwidth %s/s (EMULATED) makes every forward pass read %s, about %.0f s per pass; "
                   "raise --io-bandwidth or --mem-budget for a faster run\n",
                   format_bytes(static_cast<uint64_t>(options.io_bandwidth)).c_str(),
                   format_bytes(s.plan().streamed_bytes_per_pass).c_str(), pass_seconds);
  }
  const std::string hint = row_panel_pack_hint(s, options.model_path);
  if (!hint.empty()) std::fprintf(stderr, "note: %s\n", hint.c_str());
  return session;
}

}  // namespace sf::cli
