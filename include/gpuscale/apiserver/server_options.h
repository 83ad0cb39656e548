// ServerOptions: how the HTTPS server listens, with the serving flags of k8s.io/apiserver (as
// prometheus-adapter accepts them) so the adapter's main can reuse them:
//   --secure-port (443)  --bind-address (0.0.0.0)  --tls-cert-file  --tls-private-key-file
//   --cert-dir (apiserver.local.config/certificates)  --tls-min-version (VersionTLS12 |
//   VersionTLS13)  --tls-cipher-suites (Go names; only ECDHE suites with AES-GCM or
//   CHACHA20-POLY1305 are offered, which is also the default; the CBC and RSA-key-exchange names
//   Kubernetes accepts are accepted and left out, see tlsCipherSuitesNotOffered)
//   --client-ca-file / --requestheader-client-ca-file (repeatable: CA bundles client certificates
//   are verified against; the certificate is requested, never required)
//   --worker-threads (2: handler threads; I/O has its own, see https_server.h)
//   --max-requests-inflight (400, as kube-apiserver; 0 = no limit: requests other than health
//   probes handled or queued at once, 429 beyond)  --request-timeout (Go duration, 1m; 0 = none:
//   504 for a request not answered within it)  --shutdown-timeout (Go duration, 30s)
//   request and connection limits (see RequestLimits and ListenerLimits below; https_server.h):
//   --max-request-header-bytes (32768)  --max-request-header-field-bytes (16384)
//   --max-request-headers (256)  --max-request-target-bytes (16384)  --max-request-body-bytes
//   (4096)  --max-connections (1024: the HTTPS port)  --max-connections-per-source (256)
//   --metrics-max-connections (64: the plain listener; a quarter of it per source)
//   --probe-connections (16: kept on each listener for health probes beyond its cap)
//   --first-request-timeout (5s: from accept to the first byte of the first request, TLS
//   handshake included)  --inline-cache-hits (true: requests answered from caches without waiting
//   are answered on the I/O threads, https_server.h "Dispatch")
//   --request-read-timeout (10s: a request, once started, and the TLS handshake must arrive within
//   it)  --idle-timeout (90s)
//   --tls-reload-interval (10s: how often the certificate, key and client CA files are re-read;
//   changed files give new connections a new TLS context, see serving_tls.h)
//   --metrics-bind-address (host:port of an optional plain-HTTP listener serving /metrics only; ""
//   = off)
//   --disable-http2, --http2-max-streams-per-connection (accepted and ignored: the server speaks
//   HTTP/1.1)
// ServerOptions::addFlags declares them (core::FlagSet: parsing, usage and the flag reference).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {

enum class TlsMinVersion { kTls12, kTls13 };

// What one request may hold; a request beyond a limit is answered 431 (head) or 413 (body) and its
// connection closed. The head limits sit well above what kube-apiserver's aggregator forwards (the
// caller's headers without Authorization, plus X-Remote-User, one X-Remote-Group per group and one
// X-Remote-Extra-* per extra value: a service account such as the HPA controller's has three groups
// and a few extra values) and well below Go's 1 MiB MaxHeaderBytes, so that a connection's memory
// stays small (operations.md, "Request and connection limits").
struct RequestLimits {
  size_t headerBytes = 32 << 10;  // request line + header fields, line ends included
  size_t fieldBytes = 16 << 10;   // one header field: name + value
  size_t headerCount = 256;       // header fields (trailer fields count too)
  size_t targetBytes = 16 << 10;  // the request-target (path and query)
  size_t bodyBytes = 4 << 10;     // the body (these APIs are GET-only): Content-Length or chunks
};

// How many connections one listener holds (https_server.h, "Connections"). 0 = no limit.
struct ListenerLimits {
  size_t maxConnections = 0;
  size_t maxPerSource = 0;  // from one source address
  size_t probeReserve = 0;  // more, beyond maxConnections, each for one health probe
};

struct ServerOptions {
  std::string bindAddress = "0.0.0.0";
  uint16_t securePort = 443;  // 0 picks a free port (tests)
  std::string tlsCertFile;
  std::string tlsPrivateKeyFile;
  std::string certDir = "apiserver.local.config/certificates";
  TlsMinVersion tlsMinVersion = TlsMinVersion::kTls12;
  // OpenSSL cipher list for TLS 1.2; "" = every forward-secret AEAD suite (tls_context.h).
  std::string tlsCipherList;
  // --tls-cipher-suites names accepted for compatibility but never offered (CBC, RSA key
  // exchange); the caller warns about each.
  std::vector<std::string> tlsCipherSuitesNotOffered;
  std::vector<std::string> clientCaFiles;
  unsigned workerThreads = 2;
  std::chrono::milliseconds shutdownTimeout{30'000};
  std::chrono::milliseconds requestReadTimeout{10'000};
  std::chrono::milliseconds idleTimeout{90'000};
  std::chrono::milliseconds writeTimeout{30'000};
  std::chrono::milliseconds tlsReloadInterval{10'000};
  // Requests other than /healthz, /livez, /readyz being handled or queued at once; beyond it, 429.
  // 0 = no limit.
  unsigned maxRequestsInFlight = 400;
  // Open connections on the HTTPS port, and from one source address on it; beyond them (and the
  // probe reserve) a new connection is closed at once. 0 = no limit.
  size_t maxConnections = 1024;
  size_t maxConnectionsPerSource = 256;
  // Open connections on the plain listener (a quarter of them per source address).
  size_t metricsMaxConnections = 64;
  // Connections each listener admits beyond its cap, each for one health probe.
  size_t probeConnections = 16;
  // From accept to the first byte of the first request (the TLS handshake included).
  std::chrono::milliseconds firstRequestTimeout{5'000};
  RequestLimits requestLimits;
  // Answer on the I/O threads what the caches answer without waiting (serve.h).
  bool inlineCacheHits = true;
  // From a parsed request to its response; beyond it the client gets a 504 (the handler's late
  // result is dropped). 0 = no deadline.
  std::chrono::milliseconds requestTimeout{60'000};
  std::string metricsBindAddress;  // "host:port"; empty: no plain listener

  // Declares the serving flags above on `flags`, bound to these fields (the current values are
  // the defaults shown).
  void addFlags(core::FlagSet& flags);
};

// Parses argv-style arguments that hold serving flags only (small servers and tests built on this
// layer); returns the positional arguments.
core::Result<std::vector<std::string>> parseServingFlags(const std::vector<std::string>& args,
                                                         ServerOptions& options);

// The connection limits of the HTTPS port and of the plain listener.
ListenerLimits secureListenerLimits(const ServerOptions& options);
ListenerLimits plainListenerLimits(const ServerOptions& options);

// Splits "host:port" ("[::1]:9100" allowed). Error on a missing or bad port.
core::Result<std::pair<std::string, uint16_t>> splitHostPort(std::string_view address);

}  // namespace gpuscale::apiserver
