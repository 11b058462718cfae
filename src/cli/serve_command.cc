// specflash serve: the OpenAI-compatible HTTP server (src/server/). Loads the model once
// with --parallel slots (each with its own KV cache, all counted in --mem-budget) and
// serves until SIGINT/SIGTERM.
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/log.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/session_flags.h"
#include "engine/session.h"
#include "server/completion_service.h"
#include "server/http_server.h"
#include "server/server_metrics.h"
#include "server/slot_pool.h"
#include "tokenizer/chat_template.h"

namespace sf::cli {

int serve_command(int argc, char** argv) {
  CLI::App app{"Serve the model over an OpenAI-compatible HTTP API (chat and text completions, streaming).",
               "specflash serve"};
  SessionFlags session_flags;
  server::HttpOptions http;
  int parallel = 1, max_queue = 64;
  double queue_timeout = 300;
  std::string template_name, model_id;
  bool verbose = false;
  session_flags.add_to(app, /*model_required=*/false);
  app.add_option("--host", http.host, "address to listen on (default: loopback only)");
  app.add_option("--port", http.port, "TCP port; 0 picks a free one (printed on stderr)")->check(CLI::Range(0, 65535));
  app.add_option("--parallel", parallel, "slots: requests generated at once, each with its own KV cache in the budget")
      ->check(CLI::Range(1, 256));
  app.add_option("--api-key", http.api_key, "require 'Authorization: Bearer KEY' on /v1/ requests");
  app.add_option("--queue-size", max_queue, "requests that may wait for a slot; more get 503")
      ->check(CLI::Range(0, 4096));
  app.add_option("--queue-timeout", queue_timeout, "seconds a request may wait for a slot before a 503")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--chat-template", template_name, "chat prompt format by name, overriding the model's");
  app.add_option("--model-name", model_id, "model id for /v1/models and requests (default: the file name stem)");
  app.add_flag("-v,--verbose", verbose, "log progress to stderr");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  if (verbose) set_log_level(LogLevel::kInfo);

  auto options = session_flags.to_options();
  if (!options.ok()) return fail(options.status());
  options->n_slots = parallel;
  // Ask the template before loading weights, so a bad name fails fast.
  if (!template_name.empty()) {
    if (auto t = ChatTemplate::from_name(template_name); !t.ok()) return fail(t.status());
  }
  if (model_id.empty()) model_id = std::filesystem::path(options->model_path).stem().string();

  // Signals are handled by one waiting thread (blocked everywhere else, so that httplib's
  // workers inherit the mask); a peer that hangs up must not kill the process.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // The loading line, the slow-pass warning and the pack note, as `run` prints them; but no
  // prefill progress lines: requests prefill concurrently, and their lines would interleave.
  options->prefill_progress = [](int64_t, int64_t) {};
  auto session = create_session_with_progress(*options);
  if (!session.ok()) return fail(session.status());
  Session& s = **session;

  server::ServiceConfig config;
  config.model_id = model_id;
  auto chat_template = ChatTemplate::for_tokenizer(s.tokenizer(), template_name);
  if (chat_template.ok()) {
    config.chat_template = *chat_template;
  } else {
    config.chat_template_error = "chat completions are disabled on this server: " + chat_template.status().message();
    std::fprintf(stderr, "warning: chat completions are disabled: %s\n", chat_template.status().message().c_str());
  }

  server::ServerMetrics metrics;
  server::SlotPool pool(s, max_queue, queue_timeout);
  server::CompletionService service(s, pool, metrics, config);
  // A connection for every slot and every queued request, plus a few for /health and
  // /metrics while all of those are taken.
  http.n_http_threads = parallel + max_queue + 4;
  server::HttpServer server(service, pool, metrics, s, http);
  auto port = server.bind();
  if (!port.ok()) return fail(port.status());

  const bool loopback = http.host == "127.0.0.1" || http.host == "localhost" || http.host == "::1";
  if (!loopback && http.api_key.empty())
    std::fprintf(stderr, "warning: listening on %s without --api-key: anyone who can reach it can use it\n",
                 http.host.c_str());
  std::fprintf(stderr,
               "specflash serve: model '%s', %d slot(s) of %d tokens, %s%s, memory footprint %s of budget %s\n"
               "listening on http://%s:%d\n",
               model_id.c_str(), s.n_slots(), s.n_ctx(), s.speculative() ? "speculative " : "plain decoding",
               s.speculative() ? SpecConfig::method_name(options->spec.method) : "",
               format_bytes(s.plan().footprint_bytes()).c_str(),
               // (A share such as 0% has no byte figure in the plan: say the share, not "unlimited".)
               options->mem_budget.to_string().c_str(), http.host.c_str(), *port);
  std::fflush(stderr);

  std::thread signal_waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (sig == SIGINT || sig == SIGTERM) server.stop();
  });
  const Status st = server.run();
  // run() can also end without a signal (a listen error): wake the waiter so it exits.
  pthread_kill(signal_waiter.native_handle(), SIGTERM);
  signal_waiter.join();
  if (!st.ok()) return fail(st);
  std::fprintf(stderr, "specflash serve: stopped\n");
  return 0;
}

}  // namespace sf::cli
