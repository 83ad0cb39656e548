#include "gpuscale/apiserver/serve.h"

#include <spdlog/spdlog.h>

#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/core/signals.h"

namespace gpuscale::apiserver {

int serveUntilTerminated(const ServerOptions& options, ApiHandlerConfig config,
                         const std::function<void(ApiHandler&)>& onStarted,
                         std::shared_ptr<ServingTls> tls) {
  const core::StopSignals stopSignals;

  if (!config.registry) config.registry = std::make_shared<prometheus::Registry>();
  if (!tls) {
    auto loaded =
        ServingTls::create([options] { return loadServingTls(options); }, config.registry);
    if (!loaded) {
      spdlog::error("serving certificate: {}", loaded.status().message());
      return 1;
    }
    tls = std::move(*loaded);
  }
  if (config.serverAddress.empty()) {
    config.serverAddress = options.bindAddress + ":" + std::to_string(options.securePort);
  }
  const auto registry = config.registry;
  auto handler = std::make_shared<ApiHandler>(std::move(config));
  HttpsServer server(
      options, tls, [handler](const HttpRequest& r) { return handler->handle(r); },
      [handler](const HttpRequest& r) { return handler->handleMetricsOnly(r); });
  server.setAsyncHandler(
      [handler](std::shared_ptr<const HttpRequest> r, std::shared_ptr<PendingRequest> pending) {
        handler->handleAsync(std::move(r), std::move(pending));
      });
  server.setMetricsRegistry(registry);
  if (options.inlineCacheHits) {
    server.setInlineHandler(
        [handler](const HttpRequest& r) { return handler->handleWithoutWaiting(r); });
  }
  if (auto started = server.start(); !started.ok()) {
    spdlog::error("cannot serve: {}", started.message());
    return 1;
  }
  spdlog::info(
      "serving HTTPS on {}:{} with {} handler threads, at most {} requests in flight, {} "
      "connections ({} per source address, {} more for health probes; 0: no limit)",
      options.bindAddress, server.securePort(), options.workerThreads, options.maxRequestsInFlight,
      options.maxConnections, options.maxConnectionsPerSource, options.probeConnections);
  if (server.plainPort() != 0) {
    spdlog::info("serving plain-HTTP /metrics on {}", options.metricsBindAddress);
  }
  tls->startPolling(options.tlsReloadInterval);
  if (onStarted) onStarted(*handler);

  const int received = stopSignals.wait();
  spdlog::info("received signal {}, shutting down (deadline {} ms)", received,
               options.shutdownTimeout.count());
  handler->health().beginShutdown();
  server.shutdown(options.shutdownTimeout);
  tls->stopPolling();
  spdlog::info("shut down");
  return 0;
}

}  // namespace gpuscale::apiserver
