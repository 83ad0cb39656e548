// serveUntilTerminated: the main loop shared by programs that serve the metrics APIs (the adapter,
// the load benchmark's server, the integration tests' fixture server).
//
// Loads or generates the serving certificate (loadServingTls, or the given ServingTls), builds the
// ApiHandler and HttpsServer (with options.inlineCacheHits, ApiHandler::handleWithoutWaiting as the
// server's inline handler: cache hits answered on the I/O threads), re-reads the TLS material every
// options.tlsReloadInterval
// (ServingTls::startPolling; reload metrics go to config.registry), starts them, logs where it
// listens, then waits for SIGTERM or SIGINT; on a signal readyz starts failing and the server shuts
// down gracefully within options.shutdownTimeout. Returns the process exit code: 0 after a clean
// shutdown, 1 when serving could not start (the reason is logged).
//
// Thread safety: call once, from the main thread, before starting other threads (it blocks
// SIGTERM/SIGINT in the calling thread so that every thread started afterwards inherits the mask).
#pragma once

#include <functional>

#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/apiserver/serving_tls.h"

namespace gpuscale::apiserver {

// `onStarted` (optional) runs once the listeners are bound, with the handler (e.g. to start
// background work). `tls` (optional) replaces the default loader (the serving flags' files only),
// e.g. to add the client CAs of the authentication ConfigMap.
int serveUntilTerminated(const ServerOptions& options, ApiHandlerConfig config,
                         const std::function<void(ApiHandler&)>& onStarted = {},
                         std::shared_ptr<ServingTls> tls = nullptr);

}  // namespace gpuscale::apiserver
