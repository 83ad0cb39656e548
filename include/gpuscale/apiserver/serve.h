// serveUntilTerminated: the main loop shared by programs that serve the metrics APIs (the adapter,
// the load benchmark's server, the integration tests' fixture server).
//
// Loads or generates the serving certificate (loadServingTls), builds the ApiHandler and
// HttpsServer, starts them, logs where it listens, then waits for SIGTERM or SIGINT; on a signal
// readyz starts failing and the server shuts down gracefully within options.shutdownTimeout.
// Returns the process exit code: 0 after a clean shutdown, 1 when serving could not start (the
// reason is logged).
//
// Thread safety: call once, from the main thread, before starting other threads (it blocks
// SIGTERM/SIGINT in the calling thread so that every thread started afterwards inherits the mask).
#pragma once

#include <functional>

#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/server_options.h"

namespace gpuscale::apiserver {

// `onStarted` (optional) runs once the listeners are bound, with the handler (e.g. to start
// background work).
int serveUntilTerminated(const ServerOptions& options, ApiHandlerConfig config,
                         const std::function<void(ApiHandler&)>& onStarted = {});

}  // namespace gpuscale::apiserver
