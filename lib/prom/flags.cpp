#include "gpuscale/prom/options.h"

#include "gpuscale/core/files.h"

namespace gpuscale::prom {
namespace {

// "Name=Value" (prometheus-adapter) or "Name: Value"; the name ends at the first '=' or ':'.
Result<std::pair<std::string, std::string>> parseHeader(std::string_view value) {
  auto split = value.find_first_of("=:");
  std::string_view name = core::trimSpace(value.substr(0, split));
  if (split == std::string_view::npos || name.empty()) {
    return Status::badRequest("want Name=Value or \"Name: Value\"");
  }
  for (char c : name) {
    if (c <= 0x20 || c >= 0x7f ||
        std::string_view("()<>@,;:\\\"/[]?={}").find(c) != std::string_view::npos) {
      return Status::badRequest("header name has an invalid character");
    }
  }
  std::string_view content = core::trimSpace(value.substr(split + 1));
  for (char c : content) {
    if (c == '\r' || c == '\n' || c == '\0') {
      return Status::badRequest("header value has a line break");
    }
  }
  return std::pair{std::string(name), std::string(content)};
}

}  // namespace

void PrometheusOptions::addFlags(core::FlagSet& flags) {
  flags.addNonEmptyString("prometheus-url", &url, "base URL, may carry a path prefix");
  flags.addChoice("prometheus-verb", &verb,
                  "GET or POST (form bodies, for long queries) for the calls that accept POST",
                  {{"GET", HttpVerb::kGet}, {"POST", HttpVerb::kPost}});
  flags.addDuration("prometheus-timeout", &timeout,
                    "bound on every call, also sent as Prometheus' timeout parameter",
                    core::DurationBound::kPositive);
  flags.addString("prometheus-auth-config", &authConfigFile,
                  "kubeconfig-style file: token or token file, user name and password, client "
                  "certificate and key (file or data), CA, insecure flag");
  flags.addBool("prometheus-auth-incluster", &authInCluster,
                "the pod's service-account token and cluster CA");
  flags.addString("prometheus-token-file", &tokenFile,
                  "bearer token file, trimmed, re-read when it changes");
  flags.addString("prometheus-ca-file", &caFile, "PEM CA bundle that verifies the server");
  flags.addString("prometheus-client-tls-cert-file", &clientCertFile, "PEM client certificate")
      .alias("prometheus-client-cert");
  flags.addString("prometheus-client-tls-key-file", &clientKeyFile, "PEM client key")
      .alias("prometheus-client-key");
  flags.addBool("prometheus-insecure-skip-tls-verify", &insecureSkipTlsVerify,
                "do not verify the server's certificate (tests only)");
  flags
      .addCustom("prometheus-header", "Name=Value",
                 "extra header on every call, \"Name=Value\" (prometheus-adapter) or \"Name: "
                 "Value\", e.g. X-Scope-OrgID=tenant for Mimir or Cortex",
                 [this](std::string_view value) {
                   auto header = parseHeader(value);
                   if (!header) return header.status();
                   headers.push_back(std::move(*header));
                   return Status();
                 })
      .repeatable();
  flags.addString("prometheus-sigv4-region", &sigv4Region,
                  "sign every request with AWS Signature Version 4 for this region (Amazon "
                  "Managed Prometheus); keys from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
                  "AWS_SESSION_TOKEN");
  flags.addNonEmptyString("prometheus-sigv4-service", &sigv4Service, "service signed for");
  flags.addInt("prometheus-max-body-bytes", &maxBodyBytes, "response size cap", 1);
  flags.addInt("prometheus-max-series-body-bytes", &maxSeriesBodyBytes,
               "size cap of the /api/v1/series answers discovery decodes while they arrive", 1);
  flags.addDuration("metrics-cache-ttl", &cacheTtl,
                    "query result cache and coalescing window (0: coalescing only)");
  flags.addInt("metrics-cache-max-bytes", &cacheMaxBytes,
               "bytes of query results the cache holds, least recently used dropped first (0 "
               "keeps none)",
               0);
}

}  // namespace gpuscale::prom
