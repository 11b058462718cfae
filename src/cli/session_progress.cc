// create_session_with_progress (declared in session_flags.h): the waits a user would
// otherwise sit through in silence.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "base/timer.h"
#include "cli/session_flags.h"
#include "weights/memory_budget.h"

namespace sf::cli {
namespace {

// Files this large take about a second or more to read and plan on the machines we have.
constexpr uintmax_t kAnnounceLoadBytes = 256ull << 20;
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
  if (!options.prefill_progress)
    options.prefill_progress = [tty](int64_t done, int64_t total) {
      // On a terminal the line rewrites itself; into a file, one line per quarter.
      if (tty) {
        std::fprintf(stderr, "\r\033[Kprefill: %lld/%lld prompt tokens%s", static_cast<long long>(done),
                     static_cast<long long>(total), done == total ? "\r\033[K" : "");
      } else if (done == total || (done * 4 / total) != ((done - 1) * 4 / total)) {
        std::fprintf(stderr, "prefill: %lld/%lld prompt tokens\n", static_cast<long long>(done),
                     static_cast<long long>(total));
      }
      std::fflush(stderr);
    };
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
  return session;
}

}  // namespace sf::cli
