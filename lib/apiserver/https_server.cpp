#include "gpuscale/apiserver/https_server.h"

#include "handler_pool.h"
#include "listener.h"
#include "server_metrics.h"

namespace gpuscale::apiserver {

using detail::Listener;
using detail::ListenerContext;

namespace {

// Threads that run accept, TLS and HTTP I/O; handlers run on the HandlerPool's threads.
constexpr unsigned kIoThreads = 2;

}  // namespace

struct HttpsServer::State {
  ServerOptions options;
  TlsConfig tls;
  std::shared_ptr<ServingTls> servingTls;
  HttpHandler secureHandler;
  HttpHandler plainHandler;
  InlineHandler inlineHandler;
  AsyncHttpHandler asyncHandler;
  std::shared_ptr<detail::ServerMetrics> metrics = std::make_shared<detail::ServerMetrics>();
  detail::IoLoop loop{metrics};
  // Declared after `loop`: destroyed first, with the queued work that holds connections.
  // Shared: parked requests (pending_request.h) refer to it weakly.
  std::shared_ptr<detail::HandlerPool> pool;
  std::shared_ptr<Listener<true>> secure;
  std::shared_ptr<Listener<false>> plain;
  bool running = false;
};

HttpsServer::HttpsServer(ServerOptions options, TlsConfig tls, HttpHandler secureHandler,
                         HttpHandler plainHandler)
    : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  state_->tls = std::move(tls);
  state_->secureHandler = std::move(secureHandler);
  state_->plainHandler = std::move(plainHandler);
}

HttpsServer::HttpsServer(ServerOptions options, std::shared_ptr<ServingTls> tls,
                         HttpHandler secureHandler, HttpHandler plainHandler)
    : HttpsServer(std::move(options), TlsConfig{}, std::move(secureHandler),
                  std::move(plainHandler)) {
  state_->servingTls = std::move(tls);
}

HttpsServer::~HttpsServer() { shutdown(std::chrono::milliseconds(0)); }

core::Status HttpsServer::start() {
  State& s = *state_;
  if (s.running) return core::Status::invalid("server already started");
  if (!s.servingTls) {
    auto fixed = ServingTls::create([tls = s.tls]() -> core::Result<TlsConfig> { return tls; });
    if (!fixed) return fixed.status();
    s.servingTls = std::move(*fixed);
  }

  s.pool = std::make_shared<detail::HandlerPool>(s.options.workerThreads,
                                                 s.options.maxRequestsInFlight, s.metrics);
  ListenerContext secureContext;
  secureContext.name = "secure";
  secureContext.options = &s.options;
  secureContext.handler = &s.secureHandler;
  if (s.inlineHandler) secureContext.inlineHandler = &s.inlineHandler;
  if (s.asyncHandler) secureContext.asyncHandler = &s.asyncHandler;
  secureContext.registry = s.loop.registry();
  secureContext.tls = s.servingTls;
  secureContext.pool = s.pool.get();
  secureContext.metrics = s.metrics.get();
  secureContext.budget =
      std::make_shared<detail::ConnectionBudget>(secureListenerLimits(s.options));
  s.secure = std::make_shared<Listener<true>>(s.loop.io(), secureContext);
  if (auto status = s.secure->listen(s.options.bindAddress, s.options.securePort); !status.ok()) {
    return status;
  }
  if (!s.options.metricsBindAddress.empty()) {
    auto address = splitHostPort(s.options.metricsBindAddress);
    if (!address) return address.status();
    if (!s.plainHandler)
      return core::Status::invalid("plain listener configured without a handler");
    ListenerContext plainContext = secureContext;
    plainContext.name = "plain";
    plainContext.handler = &s.plainHandler;
    plainContext.tls = nullptr;
    plainContext.inlineHandler = nullptr;
    plainContext.pool = nullptr;
    plainContext.budget =
        std::make_shared<detail::ConnectionBudget>(plainListenerLimits(s.options));
    s.plain = std::make_shared<Listener<false>>(s.loop.io(), plainContext);
    if (auto status = s.plain->listen(address->first, address->second); !status.ok()) return status;
  }

  s.secure->start();
  if (s.plain) s.plain->start();
  s.loop.start(kIoThreads);
  s.running = true;
  return {};
}

uint16_t HttpsServer::securePort() const { return state_->secure ? state_->secure->port() : 0; }

uint16_t HttpsServer::plainPort() const { return state_->plain ? state_->plain->port() : 0; }

size_t HttpsServer::openConnections() const { return state_->loop.registry()->size(); }

void HttpsServer::shutdown(std::chrono::milliseconds deadline) {
  State& s = *state_;
  if (!s.running) return;
  s.running = false;
  s.loop.stop(
      [&s] {
        s.secure->close();
        if (s.plain) s.plain->close();
      },
      deadline);
  // Handlers still running (a slow backend) are waited for; queued ones are dropped.
  if (s.pool) s.pool->stop();
}

void HttpsServer::setAsyncHandler(AsyncHttpHandler handler) {
  state_->asyncHandler = std::move(handler);
}

void HttpsServer::setInlineHandler(InlineHandler handler) {
  state_->inlineHandler = std::move(handler);
}

void HttpsServer::setMetricsRegistry(const std::shared_ptr<prometheus::Registry>& registry) {
  if (registry) state_->metrics->registerOn(*registry);
}

}  // namespace gpuscale::apiserver
