#include "server/http_server.h"

#include <httplib.h>

#include <chrono>

#include "base/log.h"
#include "base/memory_usage.h"
#include "server/lazy_thread_pool.h"

namespace sf::server {

namespace {

using nlohmann::json;

void send_json(httplib::Response& res, int status, const json& body, ServerMetrics& metrics) {
  res.status = status;
  const std::string text = dump_json(body);
  metrics.add_bytes_sent(text.size());
  res.set_content(text, "application/json");
}

void send_error(httplib::Response& res, const ApiError& e, ServerMetrics& metrics) {
  send_json(res, e.http_status, e.to_json(), metrics);
  metrics.record_response(e.http_status);
}

// Compares without an early exit, so the time taken does not tell how much of a guess
// was right.
bool same_secret(const std::string& given, const std::string& key) {
  if (given.size() != key.size()) return false;
  unsigned diff = 0;
  for (size_t i = 0; i < key.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ key[i]);
  return diff == 0;
}

}  // namespace

HttpServer::HttpServer(CompletionService& service, SlotPool& pool, ServerMetrics& metrics, const Session& session,
                       HttpOptions options)
    : service_(service),
      pool_(pool),
      metrics_(metrics),
      session_(session),
      options_(std::move(options)),
      http_(std::make_unique<httplib::Server>()) {
  install_routes();
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
    if (port < 0) port = 0;
  } else if (!http_->bind_to_port(options_.host, port)) {
    port = 0;
  }
  if (port <= 0)
    return Status::Errorf("cannot listen on %s:%d (address in use, or not an address of this machine)",
                          options_.host.c_str(), options_.port);
  return port;
}

Status HttpServer::run() {
  if (!http_->listen_after_bind()) return Status::Error("the HTTP server stopped with an error");
  return Status::Ok();
}

void HttpServer::stop() { http_->stop(); }

void HttpServer::install_routes() {
  httplib::Server& http = *http_;
  const int n_threads = options_.n_http_threads;
  // Threads started on demand, not all at start-up: see lazy_thread_pool.h.
  http.new_task_queue = [n_threads] { return new LazyThreadPool(static_cast<size_t>(n_threads)); };
  http.set_payload_max_length(options_.max_body_bytes);

  // httplib's own failures (unknown route, body over the limit) arrive here with an empty
  // body; our handlers' errors already carry one.
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    ApiError e;
    e.http_status = res.status;
    if (res.status == 404) {
      e = ApiError::not_found("no route for " + req.method + " " + req.path, "", "unknown_url");
    } else if (res.status == 413) {
      e = {413, "the request body is larger than " + std::to_string(options_.max_body_bytes) + " bytes",
           "invalid_request_error", "", "request_too_large"};
    } else {
      e.message = "the request could not be served (HTTP " + std::to_string(res.status) + ")";
    }
    send_error(res, e, metrics_);
  });
  http.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
    SF_LOG_WARN("request failed: %s", what.c_str());
    send_error(res, ApiError::internal("internal error: " + what), metrics_);
  });

  auto authorized = [this](const httplib::Request& req, httplib::Response& res) {
    if (options_.api_key.empty()) return true;
    const std::string header = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (header.compare(0, prefix.size(), prefix) == 0 && same_secret(header.substr(prefix.size()), options_.api_key))
      return true;
    send_error(res,
               ApiError::unauthorized(header.empty() ? "no API key given (send Authorization: Bearer KEY)"
                                                     : "incorrect API key provided"),
               metrics_);
    return false;
  };

  auto completion = [this, authorized](Endpoint endpoint) {
    return [this, authorized, endpoint](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req, res)) return;
      auto admitted = service_.admit(endpoint, req.body);
      if (auto* e = std::get_if<ApiError>(&admitted)) return send_error(res, *e, metrics_);
      std::shared_ptr<CompletionJob> job = std::move(std::get<std::unique_ptr<CompletionJob>>(admitted));
      if (!job->request().stream) {
        bool cancelled = false;
        auto outcome = job->run([](const std::string&) { return true; }, &cancelled);
        if (!outcome.ok()) return send_error(res, ApiError::internal(outcome.status().message()), metrics_);
        send_json(res, 200, full_response(job->identity(), *outcome), metrics_);
        metrics_.record_response(200);
        return;
      }
      res.status = 200;
      res.set_header("Cache-Control", "no-cache");
      metrics_.record_response(200);
      res.set_chunked_content_provider("text/event-stream", [this, job](size_t, httplib::DataSink& sink) {
        const ResponseIdentity& id = job->identity();
        auto write = [&](const std::string& event) {
          metrics_.add_bytes_sent(event.size());
          return sink.write(event.data(), event.size());
        };
        bool first = true;
        bool cancelled = false;
        auto outcome = job->run(
            [&](const std::string& piece) {
              const bool ok = write(sse_event(stream_chunk(id, piece, first, "")));
              first = false;
              return ok;
            },
            &cancelled);
        if (cancelled) return false;  // the client is gone; httplib closes the connection
        if (!outcome.ok()) {
          // Headers are out; an error event is the only way left to tell the client.
          write(sse_event(ApiError::internal(outcome.status().message()).to_json()));
          return false;
        }
        json last = stream_chunk(id, "", first, outcome->finish_reason);
        last["specflash"] = extension_json(*outcome);
        if (!write(sse_event(last))) return false;
        if (job->request().include_usage && !write(sse_event(usage_chunk(id, outcome->stats)))) return false;
        if (!write(std::string(kSseDone))) return false;
        sink.done();
        return true;
      });
    };
  };
  http.Post("/v1/chat/completions", completion(Endpoint::kChat));
  http.Post("/v1/completions", completion(Endpoint::kCompletion));
  // The paths without /v1 that some clients use.
  http.Post("/chat/completions", completion(Endpoint::kChat));
  http.Post("/completions", completion(Endpoint::kCompletion));

  http.Get("/v1/models", [this, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    json model = {{"id", service_.config().model_id},
                  {"object", "model"},
                  {"created", 0},
                  {"owned_by", "specflash"},
                  {"specflash", {{"n_ctx", session_.n_ctx()}, {"slots", session_.n_slots()}}}};
    send_json(res, 200, {{"object", "list"}, {"data", json::array({model})}}, metrics_);
  });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200,
              {{"status", "ok"},
               {"slots", pool_.n_slots()},
               {"slots_busy", pool_.busy_slots()},
               {"queue_depth", pool_.queue_depth()}},
              metrics_);
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    EngineGauges g;
    g.queue_depth = pool_.queue_depth();
    g.queued_total = pool_.queued_total();
    g.busy_slots = pool_.busy_slots();
    g.n_slots = pool_.n_slots();
    g.busy_seconds = pool_.busy_seconds();
    pool_.with_engine([&](const Session& s) {
      if (s.streamer()) g.weight_bytes_streamed = s.streamer()->stats().bytes_read;
    });
    g.peak_rss_bytes = peak_rss_bytes();
    g.memory_budget_bytes = session_.plan().budget_bytes;
    g.memory_footprint_bytes = session_.plan().footprint_bytes();
    res.set_content(metrics_.render_prometheus(g), "text/plain; version=0.0.4");
  });
}

}  // namespace sf::server
