#include "gpuscale/apiserver/server_options.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_args.h"

namespace gpuscale::apiserver {
namespace {

using core::Result;
using core::Status;

Status badFlag(std::string_view name, std::string_view value, std::string_view why) {
  return Status::badRequest("invalid argument \"" + std::string(value) + "\" for \"--" +
                            std::string(name) + "\" flag: " + std::string(why));
}

Result<uint64_t> parseUnsigned(std::string_view name, std::string_view value, uint64_t max) {
  uint64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || number > max) {
    return badFlag(name, value, "must be an integer between 0 and " + std::to_string(max));
  }
  return number;
}

Result<std::chrono::milliseconds> parsePositiveDuration(std::string_view name,
                                                        std::string_view value) {
  auto duration = core::parseGoDuration(value);
  if (!duration) return badFlag(name, value, duration.status().message());
  if (duration->count() <= 0) return badFlag(name, value, "must be positive");
  return std::chrono::duration_cast<std::chrono::milliseconds>(*duration);
}

// Go's names of the TLS 1.2 suites offered (forward-secret key exchange, AEAD cipher), and
// OpenSSL's names for them.
constexpr std::pair<std::string_view, std::string_view> kTls12Suites[] = {
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
};
// Suites Kubernetes accepts in --tls-cipher-suites that gpuscale never offers (CBC ciphers, RSA key
// exchange without forward secrecy): accepted so existing manifests start, and left out.
constexpr std::string_view kTls12SuitesNotOffered[] = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",      "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_RSA_WITH_AES_128_CBC_SHA",         "TLS_RSA_WITH_AES_256_CBC_SHA",
};
constexpr std::string_view kTls13Suites[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                             "TLS_CHACHA20_POLY1305_SHA256"};

template <typename List>
bool contains(const List& list, std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// Sets options.tlsCipherList (OpenSSL's syntax) and options.tlsCipherSuitesNotOffered from the
// flag's comma-separated Go names.
Status applyCipherSuites(ServerOptions& options, std::string_view value) {
  std::string list;
  std::vector<std::string> notOffered;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string_view name = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (name.empty()) continue;
    bool known = contains(kTls13Suites, name);
    for (const auto& [goName, openSslName] : kTls12Suites) {
      if (goName != name) continue;
      list += (list.empty() ? "" : ":") + std::string(openSslName);
      known = true;
    }
    if (contains(kTls12SuitesNotOffered, name)) {
      notOffered.emplace_back(name);
      known = true;
    }
    if (!known) return badFlag("tls-cipher-suites", name, "unknown or insecure cipher suite");
  }
  options.tlsCipherList = std::move(list);
  options.tlsCipherSuitesNotOffered = std::move(notOffered);
  return {};
}

// Request and connection limits: --max-request-* (RequestLimits) and the connection counts.
// Returns nullptr when `name` is none of them.
size_t* requestLimitFlag(RequestLimits& limits, std::string_view name) {
  if (name == "max-request-header-bytes") return &limits.headerBytes;
  if (name == "max-request-header-field-bytes") return &limits.fieldBytes;
  if (name == "max-request-headers") return &limits.headerCount;
  if (name == "max-request-target-bytes") return &limits.targetBytes;
  if (name == "max-request-body-bytes") return &limits.bodyBytes;
  return nullptr;
}

size_t* connectionLimitFlag(ServerOptions& options, std::string_view name) {
  if (name == "max-connections") return &options.maxConnections;
  if (name == "max-connections-per-source") return &options.maxConnectionsPerSource;
  if (name == "metrics-max-connections") return &options.metricsMaxConnections;
  if (name == "probe-connections") return &options.probeConnections;
  return nullptr;
}

}  // namespace

ListenerLimits secureListenerLimits(const ServerOptions& options) {
  return {options.maxConnections, options.maxConnectionsPerSource, options.probeConnections};
}

ListenerLimits plainListenerLimits(const ServerOptions& options) {
  const size_t cap = options.metricsMaxConnections;
  return {cap, cap == 0 ? 0 : std::max<size_t>(1, cap / 4), options.probeConnections};
}

Result<std::pair<std::string, uint16_t>> splitHostPort(std::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::badRequest("address \"" + std::string(address) + "\": missing port");
  }
  std::string host(address.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  auto port = parseUnsigned("port", address.substr(colon + 1), 65535);
  if (!port) return Status::badRequest("address \"" + std::string(address) + "\": bad port");
  return std::make_pair(host.empty() ? std::string("0.0.0.0") : host, static_cast<uint16_t>(*port));
}

bool isBooleanServingFlag(std::string_view name) {
  return name == "disable-http2" || name == "inline-cache-hits";
}

Result<bool> applyServingFlag(ServerOptions& options, std::string_view name,
                              std::string_view value) {
  if (name == "secure-port") {
    auto port = parseUnsigned(name, value, 65535);
    if (!port) return port.status();
    options.securePort = static_cast<uint16_t>(*port);
  } else if (name == "bind-address") {
    if (value.empty()) return badFlag(name, value, "must not be empty");
    options.bindAddress = std::string(value);
  } else if (name == "tls-cert-file") {
    options.tlsCertFile = std::string(value);
  } else if (name == "tls-private-key-file") {
    options.tlsPrivateKeyFile = std::string(value);
  } else if (name == "cert-dir") {
    options.certDir = std::string(value);
  } else if (name == "tls-min-version") {
    if (value == "VersionTLS12") {
      options.tlsMinVersion = TlsMinVersion::kTls12;
    } else if (value == "VersionTLS13") {
      options.tlsMinVersion = TlsMinVersion::kTls13;
    } else {
      return badFlag(name, value, "allowed values are VersionTLS12, VersionTLS13");
    }
  } else if (name == "tls-cipher-suites") {
    if (Status applied = applyCipherSuites(options, value); !applied.ok()) return applied;
  } else if (name == "client-ca-file" || name == "requestheader-client-ca-file") {
    if (!value.empty()) options.clientCaFiles.emplace_back(value);
  } else if (name == "worker-threads") {
    auto workers = parseUnsigned(name, value, 256);
    if (!workers) return workers.status();
    if (*workers == 0) return badFlag(name, value, "must be at least 1");
    options.workerThreads = static_cast<unsigned>(*workers);
  } else if (name == "shutdown-timeout") {
    auto timeout = parsePositiveDuration(name, value);
    if (!timeout) return timeout.status();
    options.shutdownTimeout = *timeout;
  } else if (name == "request-read-timeout") {
    auto timeout = parsePositiveDuration(name, value);
    if (!timeout) return timeout.status();
    options.requestReadTimeout = *timeout;
  } else if (name == "idle-timeout") {
    auto timeout = parsePositiveDuration(name, value);
    if (!timeout) return timeout.status();
    options.idleTimeout = *timeout;
  } else if (name == "max-requests-inflight") {
    auto limit = parseUnsigned(name, value, 1'000'000);
    if (!limit) return limit.status();
    options.maxRequestsInFlight = static_cast<unsigned>(*limit);
  } else if (name == "request-timeout") {
    auto timeout = core::parseGoDuration(value);
    if (!timeout) return badFlag(name, value, timeout.status().message());
    if (timeout->count() < 0) return badFlag(name, value, "must not be negative");
    options.requestTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout);
  } else if (name == "tls-reload-interval") {
    auto interval = parsePositiveDuration(name, value);
    if (!interval) return interval.status();
    options.tlsReloadInterval = *interval;
  } else if (name == "metrics-bind-address") {
    if (!value.empty()) {
      auto split = splitHostPort(value);
      if (!split) return badFlag(name, value, split.status().message());
    }
    options.metricsBindAddress = std::string(value);
  } else if (size_t* limit = requestLimitFlag(options.requestLimits, name)) {
    auto parsed = parseUnsigned(name, value, 64u << 20);
    if (!parsed) return parsed.status();
    if (*parsed == 0 && name != "max-request-body-bytes") {
      return badFlag(name, value, "must be at least 1");
    }
    *limit = static_cast<size_t>(*parsed);
  } else if (size_t* limit = connectionLimitFlag(options, name)) {
    auto parsed = parseUnsigned(name, value, 1'000'000);
    if (!parsed) return parsed.status();
    *limit = static_cast<size_t>(*parsed);
  } else if (name == "inline-cache-hits") {
    if (value != "true" && value != "false") return badFlag(name, value, "must be true or false");
    options.inlineCacheHits = value == "true";
  } else if (name == "first-request-timeout") {
    auto timeout = parsePositiveDuration(name, value);
    if (!timeout) return timeout.status();
    options.firstRequestTimeout = *timeout;
  } else if (name == "disable-http2" || name == "http2-max-streams-per-connection") {
    // HTTP/1.1 only; accepted so prometheus-adapter command lines keep working.
  } else {
    return false;
  }
  return true;
}

Result<std::vector<std::string>> parseServingFlags(const std::vector<std::string>& args,
                                                   ServerOptions& options) {
  core::FlagCallbacks flags;
  flags.apply = [&options](std::string_view name, std::string_view value) {
    return applyServingFlag(options, name, value);
  };
  flags.isBoolean = isBooleanServingFlag;
  return core::applyFlags(args, flags);
}

std::string servingFlagsUsage() {
  return "      --secure-port int                 HTTPS port (default 443)\n"
         "      --bind-address string             address to listen on (default 0.0.0.0)\n"
         "      --tls-cert-file string            serving certificate (PEM, chain allowed)\n"
         "      --tls-private-key-file string     serving private key (PEM)\n"
         "      --cert-dir string                 where a self-signed pair is kept when no files "
         "are "
         "given (default apiserver.local.config/certificates)\n"
         "      --tls-min-version string          VersionTLS12 (default) or VersionTLS13\n"
         "      --tls-cipher-suites strings       TLS 1.2 cipher suites (Go/IANA names); only\n"
         "                                        ECDHE with AES-GCM or CHACHA20-POLY1305 is\n"
         "                                        offered (all of them by default)\n"
         "      --client-ca-file string           CA bundle for client certificates (repeatable)\n"
         "      --worker-threads int              request handler threads (default 8; = "
         "--workers)\n"
         "      --shutdown-timeout duration       graceful shutdown deadline (default 30s)\n"
         "      --request-read-timeout duration   deadline for a TLS handshake or a started "
         "request "
         "(default 10s)\n"
         "      --idle-timeout duration           keep-alive idle timeout (default 1m30s)\n"
         "      --max-requests-inflight int       requests (health probes aside) running or\n"
         "                                        queued at once; beyond it 429 (default 400,\n"
         "                                        0 = no limit)\n"
         "      --max-connections int             open connections on the HTTPS port; beyond it\n"
         "                                        (and --probe-connections) new ones are closed\n"
         "                                        at once (default 1024, 0 = no limit)\n"
         "      --max-connections-per-source int  open HTTPS connections from one address\n"
         "                                        (default 256, 0 = no limit)\n"
         "      --metrics-max-connections int     open connections on the plain listener, a\n"
         "                                        quarter of them per address (default 64)\n"
         "      --probe-connections int           connections each listener admits beyond its\n"
         "                                        cap for one health probe each (default 16)\n"
         "      --first-request-timeout duration  from accept to the first byte of the first\n"
         "                                        request, TLS handshake included (default 5s)\n"
         "      --inline-cache-hits               answer requests the caches answer without\n"
         "                                        waiting on the I/O threads (default true)\n"
         "      --request-timeout duration        a request not answered within it gets a 504\n"
         "                                        (default 1m0s, 0 = none)\n"
         "      --max-request-header-bytes int    request line + header fields; beyond it 431\n"
         "                                        (default 32768)\n"
         "      --max-request-header-field-bytes int\n"
         "                                        one header field, name + value; beyond it 431\n"
         "                                        (default 16384)\n"
         "      --max-request-headers int         header fields; beyond it 431 (default 256)\n"
         "      --max-request-target-bytes int    request target (path + query); beyond it 431\n"
         "                                        (default 16384)\n"
         "      --max-request-body-bytes int      request body; beyond it 413 (default 4096)\n"
         "      --tls-reload-interval duration    how often certificate and CA files are re-read "
         "(default 10s)\n"
         "      --metrics-bind-address string     host:port of a plain-HTTP /metrics listener "
         "(default off)\n";
}

}  // namespace gpuscale::apiserver
