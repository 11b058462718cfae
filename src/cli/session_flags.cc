#include "cli/session_flags.h"

#include "cli/default_model.h"

namespace sf::cli {

void SessionFlags::add_to(CLI::App& app, bool model_required) {
  auto* m = app.add_option("-m,--model", model_path,
                           model_required ? "GGUF model file" : "GGUF model file (default: the embedded stories260K)");
  if (model_required) m->required();
  else model_path = default_model_path();
  app.add_option("-t,--threads", n_threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("-c,--ctx-size", n_ctx, "context size in tokens (default: min(trained, 4096))")
      ->check(CLI::Range(0, 1 << 22));
  app.add_option("--mem-budget", mem_budget,
                 "DRAM budget: bytes for the whole footprint (300M, 2G) or the share of the layer weights to pin "
                 "(25%); the rest streams from storage every pass (default: everything resident)");
  app.add_option("--io-bandwidth", io_bandwidth,
                 "EMULATE storage of this read rate in bytes/s (4G ~ UFS 4.0, 2G ~ UFS 3.1); default: the real device");
  app.add_option("--stream-buffers", stream_buffers, "layer buffers in the streaming ring (>= 1; 2 double-buffers)")
      ->check(CLI::Range(1, 64));
  app.add_option("--io-backend", io_backend, "streaming reads: auto, io_uring or pread")
      ->check(CLI::IsMember({"auto", "io_uring", "pread"}));
}

Result<SessionOptions> SessionFlags::to_options() const {
  SessionOptions o;
  o.model_path = model_path;
  o.n_threads = n_threads;
  o.n_ctx = n_ctx;
  o.stream_buffers = stream_buffers;
  SF_ASSIGN_OR_RETURN(o.mem_budget, MemoryBudget::parse(mem_budget));
  if (!io_bandwidth.empty()) {
    SF_ASSIGN_OR_RETURN(o.io_bandwidth, parse_bandwidth(io_bandwidth));
  }
  if (io_backend == "io_uring") o.io.backend = DirectReaderOptions::Backend::kIoUring;
  if (io_backend == "pread") o.io.backend = DirectReaderOptions::Backend::kPread;
  return o;
}

}  // namespace sf::cli
