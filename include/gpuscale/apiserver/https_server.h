// HttpsServer: the HTTPS (and optional plain-HTTP /metrics) listener, on Boost.Beast + Asio +
// OpenSSL.
//
// - One TLS context for all new connections (a ServingTls: swapped when certificates or client CAs
//   are reloaded; open connections keep the one they started with); TLS >= 1.2 (or 1.3 only); ALPN
//   http/1.1; HTTP/1.1 with keep-alive.
// - Client certificates are requested, never required, and never fail the handshake: the chain is
// checked
//   against the configured client CA bundles and handed to the handler in HttpRequest::peer (per
//   connection).
// - A pool of `workerThreads` threads runs all I/O and the handlers; a handler may block (it holds
// one worker).
// - Limits: header bytes (431), body bytes (413), malformed requests (400), all answered in plain
// text and
//   followed by a close. Deadlines: the TLS handshake and each request, once its first byte
//   arrived, must complete within requestReadTimeout (slowloris connections are dropped); an idle
//   keep-alive connection is closed after idleTimeout; a response write must finish within
//   writeTimeout.
// - shutdown(): stops accepting, closes idle connections, lets in-flight requests finish (their
// responses carry
//   `Connection: close`), and after `deadline` closes whatever is left. Safe to call more than
//   once.
// - Handler exceptions become a 500; nothing a client sends can stop the server.
//
// Thread safety: start() and shutdown() from one controlling thread; port() anywhere after start().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/apiserver/serving_tls.h"
#include "gpuscale/core/status.h"

namespace gpuscale::apiserver {

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

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
