// HttpServer: the HTTP face of the server, on cpp-httplib. Routes
//   POST /v1/chat/completions, POST /v1/completions   (JSON, or SSE with "stream": true)
//   GET  /v1/models, GET /health, GET /metrics (Prometheus text)
// onto the CompletionService, checks the API key (Authorization: Bearer KEY on /v1/*
// when one is set), and turns every failure, httplib's own (404 route, 413 body too
// large) included, into an OpenAI-style error object.
//
// Threads: httplib serves each connection on a worker of its pool; the pool may grow so
// that every slot and every queued request can hold a connection (threads are started
// on demand: lazy_thread_pool.h), and more connections wait in the pool's queue. A
// streamed response generates inside httplib's content provider, writing one SSE event
// per text piece; a failed write means the client left, which stops the generation and
// frees the slot.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "server/completion_service.h"
#include "server/server_metrics.h"
#include "server/slot_pool.h"

namespace httplib {
class Server;
}

namespace sf::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (bind() says which)
  std::string api_key;
  int n_http_threads = 16;
  size_t max_body_bytes = 8u << 20;
};

class HttpServer {
 public:
  HttpServer(CompletionService& service, SlotPool& pool, ServerMetrics& metrics, const Session& session,
             HttpOptions options);
  ~HttpServer();

  // Binds the listening socket; returns the port.
  Result<int> bind();
  // Serves until stop(); returns when the server has shut down.
  Status run();
  // Thread-safe; makes run() return.
  void stop();

 private:
  void install_routes();

  CompletionService& service_;
  SlotPool& pool_;
  ServerMetrics& metrics_;
  const Session& session_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace sf::server
