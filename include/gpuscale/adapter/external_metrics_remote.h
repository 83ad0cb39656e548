// ExternalMetricsRemote: a client of another external.metrics.k8s.io/v1beta1 API server (KEDA's
// metrics server, a second gpuscale-adapter, ...) that gpuscale forwards the external metrics no
// rule serves to (`--external-metrics-fallback-*` flags, docs/operations.md "Coexistence").
//
// Requests (HTTPS only, one connection per request, each bounded by `timeout` as a whole: connect,
// TLS handshake, request and response):
//   listMetrics()        GET /apis/external.metrics.k8s.io/v1beta1 as the adapter itself:
//                        X-Remote-User kDiscoveryUser (no groups; the remote adds
//                        system:authenticated, which Kubernetes' system:discovery role lets read
//                        discovery paths), or the bearer token's identity when no front-proxy
//                        certificate is given
//   getExternalMetric()  GET /apis/external.metrics.k8s.io/v1beta1/namespaces/{ns}/{metric}
//                        [?labelSelector=<as the caller sent it>] with the caller's identity as
//                        kube-aggregator sends it: X-Remote-User, one X-Remote-Group header per
//                        group, X-Remote-Extra-<url-escaped key> per extra value (and X-Remote-Uid
//                        when set), presenting the client certificate (a front-proxy certificate
//                        the remote trusts as requestheader CA) and the bearer token when given.
// Beast, not cpprestsdk: cpprestsdk folds repeated headers into one comma-joined value, which the
// remote's requestheader authenticator would read as a single group.
//
// Answers: a 200 ExternalMetricValueList becomes values (quantities re-parsed, so they are written
// back canonically); a Status body from the remote is passed through (code, reason, message,
// details name/group/kind and cause messages); another non-200 answer is a Status with the remote's
// HTTP code naming it; an unreachable remote is 503 and a timeout 504, both naming the fallback.
//
// Thread safety: thread-safe; calls block the calling thread (a server worker) up to `timeout`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/apiserver/provider.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/result.h"

namespace gpuscale::adapter {

// What an answer of the remote may hold: its header (status line and fields) and its body.
inline constexpr uint32_t kFallbackMaxHeaderBytes = 16 * 1024;
inline constexpr uint64_t kFallbackMaxBodyBytes = 16 * 1024 * 1024;

// The user the remote's discovery list is fetched as (front-proxy headers).
inline constexpr std::string_view kDiscoveryUser = "gpuscale-adapter";

struct ExternalFallbackOptions {
  std::string url;  // https://host[:port][/prefix]; empty: no fallback
  std::string caFile;
  std::string clientCertFile;
  std::string clientKeyFile;
  std::string tokenFile;  // re-read for every request (rotated service-account tokens)
  bool insecureSkipTlsVerify = false;
  core::Duration timeout = std::chrono::seconds(5);
  // How long the remote's discovery list is reused before it is fetched again.
  core::Duration discoveryTtl = std::chrono::seconds(30);

  bool enabled() const { return !url.empty(); }
  // Declares the --external-metrics-fallback-* flags, bound to these fields.
  void addFlags(core::FlagSet& flags);
};

// The headers kube-aggregator's proxy sets for `user` (X-Remote-User, X-Remote-Uid when set, one
// X-Remote-Group per group, X-Remote-Extra-<key with URL path escaping> per value), in that order.
std::vector<std::pair<std::string, std::string>> aggregatorIdentityHeaders(
    const apiserver::UserInfo& user);

// Decodes a remote answer: 200 -> the list's items; anything else -> the Status described above.
core::Result<std::vector<apiserver::ExternalMetricValue>> decodeExternalMetricReply(
    int httpCode, std::string_view body);
// Decodes an APIResourceList of external.metrics.k8s.io/v1beta1 (200 only).
core::Result<std::vector<apiserver::ExternalMetricInfo>> decodeExternalResourceList(
    int httpCode, std::string_view body);

class ExternalMetricsRemote {
 public:
  // Reads the CA, client certificate and key; errors name the flag and file.
  static core::Result<std::shared_ptr<ExternalMetricsRemote>> create(
      const ExternalFallbackOptions& options);
  ~ExternalMetricsRemote();

  core::Result<std::vector<apiserver::ExternalMetricInfo>> listMetrics() const;
  core::Result<std::vector<apiserver::ExternalMetricValue>> getExternalMetric(
      const apiserver::UserInfo& caller, std::string_view rawLabelSelector,
      std::string_view namespaceName, std::string_view metric) const;

  // "https://host:port" as given (for logs).
  const std::string& url() const;

  struct Impl;

 private:
  explicit ExternalMetricsRemote(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::adapter
