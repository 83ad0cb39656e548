// HttpsServer: the HTTPS (and optional plain-HTTP /metrics) listener, on Boost.Beast + Asio +
// OpenSSL.
//
// - One TLS context for all new connections (a ServingTls: swapped when certificates or client CAs
//   are reloaded; open connections keep the one they started with); TLS >= 1.2 (or 1.3 only); ALPN
//   http/1.1; HTTP/1.1 with keep-alive. OpenSSL reads and writes the socket itself
//   (tls_socket_stream.h), so an idle connection holds no TLS record buffer: a thousand idle
//   keep-alive connections cost about 20 MiB.
// - Client certificates are requested, never required, and never fail the handshake: the chain is
//   checked against the configured client CA bundles and handed to the handler in
//   HttpRequest::peer (per connection).
// - Dispatch. Two I/O threads run the io_context: accepting, TLS handshakes, reading and writing.
//   Handlers do not run there: the providers ask Prometheus synchronously (QueryRunner::run waits
//   for the answer, up to --prometheus-timeout), so a handler can hold its thread for seconds.
//   Before, one pool ran I/O and handlers alike; with every thread waiting on a slow Prometheus,
//   nothing else was accepted or answered, /healthz included, and queued work had no bound. Now:
//   * /healthz, /livez and /readyz (exactly these paths, any query, no Authorization header, so
//     answering them needs no remote call: no TokenReview, and the delegated authorizer's
//     always-allowed paths need no SubjectAccessReview) are answered on the I/O thread as soon as
//     they are read, never queued behind other requests. Probes of single checks
//     (/readyz/shutdown) and health requests carrying a token take the normal path.
//   * A request the inline handler (setInlineHandler) answers without waiting is answered on the
//     I/O thread too: the HPA's cached requests skip the hop to a handler thread and back (two
//     thread wake-ups that cost a third of the cached path's throughput). The handler refuses
//     whatever would wait, and such requests go on as below.
//   * Every other request takes a slot of `maxRequestsInFlight` (0: unlimited) and runs on one of
//     `workerThreads` handler threads (requests beyond the threads wait in order, holding their
//     slot). Without a free slot the answer is at once a 429 with `Retry-After: 1` and a
//     Kubernetes Status (reason TooManyRequests), as kube-apiserver's max-in-flight filter.
//   * With an asynchronous handler (setAsyncHandler), a request may be parked while it waits for
//     a remote review: the handler thread and the in-flight slot are free again, and the rest of
//     the request runs on a handler thread when the answer comes (pending_request.h).
//   * A request not answered within `requestTimeout` of being read gets a 504 Status (reason
//     Timeout); a handler still running keeps its thread and slot until it returns (its result is
//     dropped), and a request whose deadline passed while it waited is not run at all.
//   * The plain listener's handler (/metrics) is cheap and runs on the I/O thread.
// - Connections, budgeted per listener (connection_budget.h): the HTTPS port admits
//   `maxConnections`, at most `maxConnectionsPerSource` from one source address; the plain
//   listener `metricsMaxConnections` (a quarter per source). Beyond its cap each listener admits
//   `probeConnections` more, each for one health probe (anything else there gets a 503 with
//   Retry-After: 1), so the kubelet's probes (a new connection each) get through a full listener.
//   Beyond that, or beyond the per-source cap, a new connection is closed at once, before any TLS
//   work. A new connection must complete its TLS handshake and send the first byte of its first
//   request within firstRequestTimeout (a short deadline: kube-apiserver and the kubelet send at
//   once); afterwards an idle keep-alive connection may wait idleTimeout for its next request.
// - Each degraded mode logs a warning the first time (then at most every 5 minutes, with the count
//   since) and is counted when a registry is set (setMetricsRegistry); series of one listener
//   carry listener="secure" or "plain":
//     gpuscale_apiserver_rejected_requests_total        429s for want of an in-flight slot
//     gpuscale_apiserver_request_timeouts_total         504s for requests past requestTimeout
//     gpuscale_apiserver_rejected_connections_total{reason}  closed at accept: listener_full,
//                                                       source_full
//     gpuscale_apiserver_connection_timeouts_total{deadline}  closed by a deadline:
//                                                       first_request, request_read, write
//     gpuscale_apiserver_refused_requests_total{limit}  431/413/400s (the limits below), and
//                                                       503s to non-probes in the probe room
//                                                       (limit="not_probe")
//     gpuscale_apiserver_internal_errors_total{where}   exceptions caught around handlers
//     gpuscale_apiserver_open_connections               gauge
//     gpuscale_apiserver_admitted_requests              gauge: requests holding a slot
// - Limits (options.requestLimits, request_parser.h): the request line and header fields, one
//   field, the number of fields, the request target (431) and the body (413) are checked as the
//   bytes arrive, in a read buffer that cannot grow beyond them; a malformed request gets a 400.
//   All are answered in plain text and followed by a close. Deadlines: the TLS handshake and each
//   request, once its first byte arrived, must complete within requestReadTimeout (slowloris
//   connections are dropped); an idle keep-alive connection is closed after idleTimeout; a
//   response write must finish within writeTimeout. Between requests a connection keeps no more
//   than a small read buffer (a large request's buffer and its response are given back).
// - shutdown(): stops accepting, closes idle connections, lets in-flight requests finish (their
//   responses carry `Connection: close`), and after `deadline` closes whatever is left; handlers
//   still running are waited for, queued ones dropped. Safe to call more than once.
// - Handler exceptions become a 500. No exception leaves a connection's handlers, the acceptor or
//   the I/O and handler threads: whatever throws there drops one connection and is counted; nothing
//   a client sends can stop the server.
//
// Thread safety: setMetricsRegistry(), start() and shutdown() from one controlling thread; port()
// anywhere after start(). The handlers are called concurrently from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/apiserver/pending_request.h"
#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/apiserver/serving_tls.h"
#include "gpuscale/core/status.h"

namespace prometheus {
class Registry;
}

namespace gpuscale::apiserver {

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// Answers a request on the I/O thread when it can do so without waiting; nullopt otherwise.
using InlineHandler = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

class HttpsServer {
 public:
  // `plainHandler` serves the plain listener (options.metricsBindAddress); it may be empty when
  // none is set.
  HttpsServer(ServerOptions options, TlsConfig tls, HttpHandler secureHandler,
              HttpHandler plainHandler = {});
  // With reloadable TLS material (the caller keeps `tls` polling or reloads it).
  HttpsServer(ServerOptions options, std::shared_ptr<ServingTls> tls, HttpHandler secureHandler,
              HttpHandler plainHandler = {});
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Requests of the secure listener that go to the handler threads are given to `handler`, which
  // may park them while it waits for a remote answer (pending_request.h); health probes still
  // take the synchronous secure handler. Call before start().
  void setAsyncHandler(AsyncHttpHandler handler);

  // Registers the server's families (above) on `registry`; call before start().
  void setMetricsRegistry(const std::shared_ptr<prometheus::Registry>& registry);
  // Requests of the secure listener this handler answers (it must never wait: ApiHandler::
  // handleWithoutWaiting) are answered on the I/O thread; the others take a handler thread. Call
  // before start().
  void setInlineHandler(InlineHandler handler);

  // Builds the TLS context, binds the listeners and starts the workers. Errors: bad certificate or
  // key, address in use, bad bind address.
  core::Status start();

  // The bound ports (useful with port 0); 0 before start() or without a plain listener.
  uint16_t securePort() const;
  uint16_t plainPort() const;

  // Graceful shutdown (see above). Returns when every worker has stopped.
  void shutdown(std::chrono::milliseconds deadline);

  // Number of open connections (for tests and /metrics).
  size_t openConnections() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace gpuscale::apiserver
