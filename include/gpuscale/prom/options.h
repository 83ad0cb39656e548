// How gpuscale reaches Prometheus: the `--prometheus-*` and `--metrics-cache-ttl` flags, with
// prometheus-adapter's names and meanings where it has the flag, and the credentials they point to.
//
// Flags (declared by PrometheusOptions::addFlags, see core/flag_set.h):
//   --prometheus-url                      base URL, may carry a path prefix (https://localhost)
//   --prometheus-verb                     GET or POST (form body) for every call (GET)
//   --prometheus-timeout                  Go duration; the whole call, also sent as `timeout=`
//   (10s)
//   --prometheus-auth-config              kubeconfig-style file: token/tokenFile,
//   username/password,
//                                         client certificate and key (file or -data), CA, insecure
//                                         flag
//   --prometheus-auth-incluster           the pod's service-account token and cluster CA
//   --prometheus-token-file               bearer token file, trimmed, re-read when it changes
//   --prometheus-ca-file                  PEM CA bundle that verifies the server
//   --prometheus-client-tls-cert-file     PEM client certificate (alias --prometheus-client-cert)
//   --prometheus-client-tls-key-file      PEM client key (alias --prometheus-client-key)
//   --prometheus-insecure-skip-tls-verify do not verify the server certificate (tests only)
//   --prometheus-header                   repeatable, "Name=Value" (prometheus-adapter) or "Name:
//   Value"
//   --prometheus-max-body-bytes           response size cap (52428800)
//   --prometheus-max-series-body-bytes    size cap of the /api/v1/series answers discovery decodes
//                                         while they arrive (1073741824; they cost no memory)
//   --metrics-cache-ttl                   Go duration; query result cache and coalescing window, 0
//   = off (2s)
//   --metrics-cache-max-bytes             bytes of query results the cache holds, least recently
//                                         used dropped first; 0 = keep none (67108864)
//
// Differences from prometheus-adapter, on purpose: the token is trimmed and re-read on change;
// client certificates work without a CA file; a CA file does not switch off the auth config;
// timeouts exist.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/result.h"

namespace gpuscale::prom {

using core::Result;
using core::Status;

enum class HttpVerb { kGet, kPost };

struct PrometheusOptions {
  std::string url = "https://localhost";
  HttpVerb verb = HttpVerb::kGet;
  core::Duration timeout = std::chrono::seconds(10);
  std::string authConfigFile;
  bool authInCluster = false;
  std::string tokenFile;
  std::string caFile;
  std::string clientCertFile;
  std::string clientKeyFile;
  bool insecureSkipTlsVerify = false;
  std::vector<std::pair<std::string, std::string>> headers;
  // AWS Signature Version 4 (sigv4.h) for every request when the region is set; the keys come from
  // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN in the environment.
  std::string sigv4Region;
  std::string sigv4Service = "aps";
  size_t maxBodyBytes = 50u << 20;
  // The series relist's body is never held whole (HttpClient::seriesLabelNamesAsync), so its cap
  // bounds the time spent on it rather than memory: ~90 MB per million series.
  size_t maxSeriesBodyBytes = size_t{1} << 30;
  core::Duration cacheTtl = std::chrono::seconds(2);
  // Bytes of query results the cache may hold (approximate, see caching_client.h); 0 = none.
  size_t cacheMaxBytes = size_t{64} << 20;

  // Declares the flags above on `flags`, bound to these fields.
  void addFlags(core::FlagSet& flags);
  // Checks what single flags cannot: URL scheme and host, certificate and key given together,
  // incompatible auth sources.
  Status validate() const;
};

}  // namespace gpuscale::prom
