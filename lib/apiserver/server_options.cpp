#include "gpuscale/apiserver/server_options.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>

namespace gpuscale::apiserver {
namespace {

using core::Result;
using core::Status;

std::optional<uint16_t> parsePort(std::string_view value) {
  uint16_t port = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), port);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    return std::nullopt;
  }
  return port;
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
    if (!known) {
      return Status::badRequest("unknown or insecure cipher suite " + std::string(name));
    }
  }
  options.tlsCipherList = std::move(list);
  options.tlsCipherSuitesNotOffered = std::move(notOffered);
  return {};
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
  auto port = parsePort(address.substr(colon + 1));
  if (!port) return Status::badRequest("address \"" + std::string(address) + "\": bad port");
  return std::make_pair(host.empty() ? std::string("0.0.0.0") : host, static_cast<uint16_t>(*port));
}

void ServerOptions::addFlags(core::FlagSet& flags) {
  using core::DurationBound;
  flags.addInt("secure-port", &securePort, "HTTPS port (0 picks a free one)", 0, 65535);
  flags.addNonEmptyString("bind-address", &bindAddress, "address to listen on");
  flags.addString("tls-cert-file", &tlsCertFile, "serving certificate (PEM, chain allowed)");
  flags.addString("tls-private-key-file", &tlsPrivateKeyFile, "serving private key (PEM)");
  flags.addString("cert-dir", &certDir,
                  "where a self-signed pair is generated and kept when no certificate files are "
                  "given");
  flags.addChoice(
      "tls-min-version", &tlsMinVersion, "VersionTLS12 or VersionTLS13",
      {{"VersionTLS12", TlsMinVersion::kTls12}, {"VersionTLS13", TlsMinVersion::kTls13}});
  flags
      .addCustom("tls-cipher-suites", "strings",
                 "TLS 1.2 cipher suites by Go (IANA) name; only ECDHE with AES-GCM or "
                 "CHACHA20-POLY1305 is ever offered (all of them by default): the CBC and "
                 "RSA-key-exchange names Kubernetes accepts are accepted and left out, with a "
                 "warning",
                 [this](std::string_view value) { return applyCipherSuites(*this, value); })
      .defaultText("");
  flags.addStringList("client-ca-file", &clientCaFiles,
                      "CA bundle client certificates are verified against (requested, never "
                      "required)",
                      core::ListForm::kRepeated);
  flags.addStringList("requestheader-client-ca-file", &clientCaFiles,
                      "CA bundle of front-proxy client certificates (requested like "
                      "--client-ca-file)",
                      core::ListForm::kRepeated);
  flags
      .addInt("worker-threads", &workerThreads,
              "request handler threads; accepting, TLS and health probes have two I/O threads of "
              "their own",
              1, 256)
      .alias("workers");
  flags.addDuration("shutdown-timeout", &shutdownTimeout, "graceful shutdown deadline",
                    DurationBound::kPositive);
  flags.addDuration("request-read-timeout", &requestReadTimeout,
                    "deadline for a TLS handshake or a started request", DurationBound::kPositive);
  flags.addDuration("idle-timeout", &idleTimeout, "keep-alive idle timeout",
                    DurationBound::kPositive);
  flags.addInt("max-requests-inflight", &maxRequestsInFlight,
               "requests (health probes aside) running or queued at once; beyond it 429 (0 = no "
               "limit)",
               0, 1'000'000);
  flags.addInt("max-connections", &maxConnections,
               "open connections on the HTTPS port; beyond it (and --probe-connections) new ones "
               "are closed at once (0 = no limit)",
               0, 1'000'000);
  flags.addInt("max-connections-per-source", &maxConnectionsPerSource,
               "open HTTPS connections from one address (0 = no limit)", 0, 1'000'000);
  flags.addInt("metrics-max-connections", &metricsMaxConnections,
               "open connections on the plain listener, a quarter of them per address (0 = no "
               "limit)",
               0, 1'000'000);
  flags.addInt("probe-connections", &probeConnections,
               "connections each listener admits beyond its cap for one health probe each", 0,
               1'000'000);
  flags.addDuration("first-request-timeout", &firstRequestTimeout,
                    "from accept to the first byte of the first request, TLS handshake included",
                    DurationBound::kPositive);
  flags.addBool("inline-cache-hits", &inlineCacheHits,
                "answer requests the caches answer without waiting on the I/O threads");
  flags.addDuration("request-timeout", &requestTimeout,
                    "a request not answered within it gets a 504 (0 = none)");
  flags.addInt("max-request-header-bytes", &requestLimits.headerBytes,
               "request line + header fields; beyond it 431", 1, 64 << 20);
  flags.addInt("max-request-header-field-bytes", &requestLimits.fieldBytes,
               "one header field, name + value; beyond it 431", 1, 64 << 20);
  flags.addInt("max-request-headers", &requestLimits.headerCount, "header fields; beyond it 431", 1,
               64 << 20);
  flags.addInt("max-request-target-bytes", &requestLimits.targetBytes,
               "request target (path + query); beyond it 431", 1, 64 << 20);
  flags.addInt("max-request-body-bytes", &requestLimits.bodyBytes, "request body; beyond it 413", 0,
               64 << 20);
  flags.addDuration("tls-reload-interval", &tlsReloadInterval,
                    "how often the certificate, key and CA files are re-read",
                    DurationBound::kPositive);
  flags.addCustom("metrics-bind-address", "string",
                  "host:port of a plain-HTTP listener serving /metrics only (default off)",
                  [this](std::string_view value) {
                    if (!value.empty()) {
                      if (auto split = splitHostPort(value); !split) return split.status();
                    }
                    metricsBindAddress = std::string(value);
                    return Status();
                  });
  flags.addIgnored("disable-http2", true, "the server speaks HTTP/1.1");
  flags.addIgnored("http2-max-streams-per-connection", false, "the server speaks HTTP/1.1");
}

Result<std::vector<std::string>> parseServingFlags(const std::vector<std::string>& args,
                                                   ServerOptions& options) {
  core::FlagSet flags("serving");
  options.addFlags(flags);
  return flags.parse(args);
}

}  // namespace gpuscale::apiserver
