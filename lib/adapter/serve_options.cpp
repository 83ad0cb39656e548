#include "gpuscale/adapter/serve_options.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "gpuscale/auth/delegation_options.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/prom/partial_response.h"

namespace gpuscale::adapter {
namespace {

// Flags of prometheus-adapter (and of the k8s.io/apiserver and klog flag sets it embeds) that
// gpuscale accepts without acting on them.
struct IgnoredFlag {
  std::string_view name;
  bool boolean;
  std::string_view why;
};

constexpr std::string_view kRemoved = "removed from prometheus-adapter";
constexpr std::string_view kKlog = "klog flag; gpuscale logs to stderr";
constexpr std::string_view kNoKube = "needs the Kubernetes client, not used in this mode";
constexpr std::string_view kUnsupported = "not supported by gpuscale";
constexpr std::string_view kListerKubeconfig =
    "ignored: the object lister's kubeconfig is --lister-kubeconfig (default in-cluster)";

constexpr std::array kIgnored = {
    IgnoredFlag{"logtostderr", true, kKlog},
    IgnoredFlag{"alsologtostderr", true, kKlog},
    IgnoredFlag{"log-dir", false, kKlog},
    IgnoredFlag{"log-file", false, kKlog},
    IgnoredFlag{"log-file-max-size", false, kKlog},
    IgnoredFlag{"log-backtrace-at", false, kKlog},
    IgnoredFlag{"stderrthreshold", false, kKlog},
    IgnoredFlag{"skip-headers", true, kKlog},
    IgnoredFlag{"skip-log-headers", true, kKlog},
    IgnoredFlag{"add-dir-header", true, kKlog},
    IgnoredFlag{"one-output", true, kKlog},
    IgnoredFlag{"vmodule", false, kKlog},
    IgnoredFlag{"log-flush-frequency", false, kKlog},
    IgnoredFlag{"legacy-stderr-threshold-behavior", true, kKlog},
    IgnoredFlag{"logging-format", false, kKlog},
    IgnoredFlag{"log-json-split-stream", true, kKlog},
    IgnoredFlag{"log-json-info-buffer-size", false, kKlog},
    IgnoredFlag{"log-text-split-stream", true, kKlog},
    IgnoredFlag{"log-text-info-buffer-size", false, kKlog},
    IgnoredFlag{"rate-interval", false, kRemoved},
    IgnoredFlag{"label-prefix", false, kRemoved},
    IgnoredFlag{"lister-kubeconfig", false, kNoKube},
    IgnoredFlag{"kubeconfig", false, kListerKubeconfig},
    IgnoredFlag{"client-qps", false, kNoKube},
    IgnoredFlag{"client-burst", false, kNoKube},
    IgnoredFlag{"authentication-kubeconfig", false, kNoKube},
    IgnoredFlag{"authentication-token-webhook-cache-ttl", false, kNoKube},
    IgnoredFlag{"authentication-skip-lookup", true, kNoKube},
    IgnoredFlag{"authentication-tolerate-lookup-failure", true, kNoKube},
    IgnoredFlag{"requestheader-username-headers", false, kNoKube},
    IgnoredFlag{"requestheader-group-headers", false, kNoKube},
    IgnoredFlag{"requestheader-extra-headers-prefix", false, kNoKube},
    IgnoredFlag{"requestheader-allowed-names", false, kNoKube},
    IgnoredFlag{"authorization-kubeconfig", false, kNoKube},
    IgnoredFlag{"authorization-webhook-cache-authorized-ttl", false, kNoKube},
    IgnoredFlag{"authorization-webhook-cache-unauthorized-ttl", false, kNoKube},
    IgnoredFlag{"authorization-always-allow-paths", false, kNoKube},
    IgnoredFlag{"delegated-reviews-per-second", false, kNoKube},
    IgnoredFlag{"delegated-reviews-max-waiting", false, kNoKube},
    IgnoredFlag{"tls-sni-cert-key", false, kUnsupported},
    IgnoredFlag{"permit-port-sharing", true, kUnsupported},
    IgnoredFlag{"permit-address-sharing", true, kUnsupported},
    IgnoredFlag{"profiling", true, kUnsupported},
    IgnoredFlag{"contention-profiling", true, kUnsupported},
    IgnoredFlag{"debug-socket-path", false, kUnsupported},
    IgnoredFlag{"enable-priority-and-fairness", true, kUnsupported},
};

// klog registers its flags with underscores (--log_dir, --skip_headers); Kubernetes components
// normalise '_' to '-', so both spellings name the same flag.
std::string normalizedFlagName(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

const IgnoredFlag* ignoredFlag(std::string_view rawName) {
  const std::string name = normalizedFlagName(rawName);
  for (const IgnoredFlag& flag : kIgnored) {
    if (flag.name == name) return &flag;
  }
  // Every audit flag: --audit-log-*, --audit-webhook-*, --audit-policy-file.
  static constexpr IgnoredFlag kAudit{"audit-*", false, kUnsupported};
  if (name.starts_with("audit-")) {
    static constexpr IgnoredFlag kAuditBool{"audit-*", true, kUnsupported};
    bool boolean = name == "audit-log-compress" || name.ends_with("throttle-enable") ||
                   name.ends_with("truncate-enabled");
    return boolean ? &kAuditBool : &kAudit;
  }
  return nullptr;
}

constexpr std::string_view kFallbackPrefix = "external-metrics-fallback-";

bool isOwnBoolFlag(std::string_view name) {
  return name == "standalone" || name == "resource-metrics" || name == "object-cache" ||
         name == "external-metrics-fallback-insecure-skip-tls-verify";
}

core::Status badFlag(std::string_view name, std::string_view value, std::string_view why) {
  return core::Status::badRequest("invalid argument \"" + std::string(value) + "\" for \"--" +
                                  std::string(name) + "\" flag: " + std::string(why));
}

core::Result<core::Duration> durationFlag(std::string_view name, std::string_view value) {
  auto parsed = core::parseGoDuration(value);
  if (!parsed) return badFlag(name, value, parsed.status().message());
  if (parsed->count() < 0) return badFlag(name, value, "must not be negative");
  return *parsed;
}

core::Result<int> intFlag(std::string_view name, std::string_view value, int min) {
  int out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || out < min) {
    return badFlag(name, value, "must be an integer of at least " + std::to_string(min));
  }
  return out;
}

core::Result<bool> boolFlag(std::string_view name, std::string_view value) {
  if (value != "true" && value != "false") return badFlag(name, value, "must be true or false");
  return value == "true";
}

// Applies one --external-metrics-fallback-* flag; false when `name` is not one.
core::Result<bool> applyFallbackFlag(ExternalFallbackOptions& fallback, std::string_view name,
                                     std::string_view value) {
  if (!name.starts_with(kFallbackPrefix)) return false;
  const std::string_view key = name.substr(kFallbackPrefix.size());
  if (key == "url") {
    fallback.url = std::string(value);
  } else if (key == "ca-file") {
    fallback.caFile = std::string(value);
  } else if (key == "client-cert-file") {
    fallback.clientCertFile = std::string(value);
  } else if (key == "client-key-file") {
    fallback.clientKeyFile = std::string(value);
  } else if (key == "token-file") {
    fallback.tokenFile = std::string(value);
  } else if (key == "insecure-skip-tls-verify") {
    auto b = boolFlag(name, value);
    if (!b) return b.status();
    fallback.insecureSkipTlsVerify = *b;
  } else if (key == "timeout" || key == "discovery-ttl") {
    auto d = durationFlag(name, value);
    if (!d) return d.status();
    if (d->count() == 0) return badFlag(name, value, "must be positive");
    (key == "timeout" ? fallback.timeout : fallback.discoveryTtl) = *d;
  } else {
    return false;
  }
  return true;
}

// Applies one of the serve command's own flags; false when `name` is not one.
core::Result<bool> applyOwnFlag(ServeOptions& options, std::string_view name,
                                std::string_view value) {
  if (name == "config") {
    options.configFile = std::string(value);
  } else if (name == "metrics-relist-interval") {
    auto d = durationFlag(name, value);
    if (!d) return d.status();
    options.relist.interval = *d;
  } else if (name == "metrics-max-age") {
    auto d = durationFlag(name, value);
    if (!d) return d.status();
    options.relist.maxAge = *d;
  } else if (name == "discovery-interval") {
    auto d = durationFlag(name, value);
    if (!d) return d.status();
    if (d->count() == 0) return badFlag(name, value, "must be positive");
    options.discoveryInterval = *d;
  } else if (name == "discovery-backend") {
    auto backend = prom::parseDiscoveryBackend(value);
    if (!backend) return badFlag(name, value, backend.status().message());
    auto replicaLabels = std::move(options.relist.discovery.replicaLabels);
    options.relist.discovery = prom::discoveryOptionsFor(*backend);
    options.discoveryBackend = *backend;
    options.relist.discovery.replicaLabels = std::move(replicaLabels);
  } else if (name == "thanos-replica-label") {
    auto added = prom::appendReplicaLabels(value, options.relist.discovery.replicaLabels);
    if (!added.ok()) return badFlag(name, value, added.message());
  } else if (name == "allowed-credential-dir") {
    if (value.empty()) return core::Status::badRequest("--allowed-credential-dir: empty directory");
    options.allowedCredentialDirs.emplace_back(value);
  } else if (name == "standalone") {
    auto b = boolFlag(name, value);
    if (!b) return b.status();
    options.standalone = *b;
  } else if (name == "object-cache") {
    auto b = boolFlag(name, value);
    if (!b) return b.status();
    options.objectCache = *b;
  } else if (name == "resource-metrics") {
    auto b = boolFlag(name, value);
    if (!b) return b.status();
    options.resourceMetrics = *b;
  } else if (name == "workers") {
    auto n = intFlag(name, value, 1);
    if (!n) return n.status();
    options.server.workerThreads = static_cast<unsigned>(*n);
  } else if (name == "v") {
    auto n = intFlag(name, value, 0);
    if (!n) return n.status();
    options.verbosity = *n;
  } else {
    return applyFallbackFlag(options.externalFallback, name, value);
  }
  return true;
}

}  // namespace

core::Result<ServeOptions> parseServeFlags(const std::vector<std::string>& args) {
  ServeOptions options;
  options.server.workerThreads = 8;
  std::vector<std::string> rest;
  auto prometheus = prom::parsePrometheusFlags(args, &rest);
  if (!prometheus) return prometheus.status();
  options.prometheus = std::move(*prometheus);
  auto remaining = apiserver::parseServingFlags(rest, options.server);
  if (!remaining) return remaining.status();
  for (const auto& suite : options.server.tlsCipherSuitesNotOffered) {
    options.warnings.push_back("--tls-cipher-suites: " + suite +
                               " is not offered (CBC cipher or no forward secrecy)");
  }

  const std::vector<std::string>& own = *remaining;
  std::set<std::string> warned;
  for (size_t i = 0; i < own.size(); ++i) {
    std::string_view arg = own[i];
    const size_t dashes = arg.starts_with("--") ? 2 : (arg.starts_with("-") ? 1 : 0);
    if (dashes == 0 || arg.size() == dashes) continue;  // positional: ignored
    std::string_view body = arg.substr(dashes);
    const size_t eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    if (dashes == 1 && name != "v") {
      return core::Status::badRequest("unknown shorthand flag: '" + std::string(name.substr(0, 1)) +
                                      "' in " + std::string(arg));
    }
    const IgnoredFlag* ignored = ignoredFlag(name);
    const bool boolean = isOwnBoolFlag(name) || (ignored != nullptr && ignored->boolean);
    std::string value;
    bool consumedNext = false;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (boolean) {
      value = "true";
    } else if (i + 1 < own.size()) {
      value = own[i + 1];
      consumedNext = true;
    } else if (ignored != nullptr || name == "config" || name == "allowed-credential-dir" ||
               name == "thanos-replica-label" || name.starts_with("metrics-") ||
               name.starts_with(kFallbackPrefix) || name == "workers" || name == "v") {
      return core::Status::badRequest("flag needs an argument: " + std::string(arg));
    }
    if (ignored != nullptr) {
      // One warning per flag, however often (and in whichever spelling) it is given.
      if (warned.insert(normalizedFlagName(name)).second) {
        options.warnings.push_back("flag --" + std::string(name) + " is ignored (" +
                                   std::string(ignored->why) + ")");
      }
    } else {
      auto applied = applyOwnFlag(options, name, value);
      if (!applied) return applied.status();
      if (!*applied) return core::Status::badRequest("unknown flag: --" + std::string(name));
    }
    if (consumedNext) ++i;
  }
  if (options.configFile.empty()) {
    return core::Status::badRequest(
        "no metrics discovery configuration file specified (make sure to use --config)");
  }
  if (std::string warning =
          prom::turnOffThanosPartialResponse(options.prometheus, options.discoveryBackend);
      !warning.empty()) {
    options.warnings.push_back(std::move(warning));
  }
  return options;
}

std::string serveUsage() {
  return "usage: gpuscale-adapter [serve] --config FILE [flags]\n"
         "\n"
         "Serves custom.metrics.k8s.io and external.metrics.k8s.io from Prometheus.\n"
         "\n"
         "Adapter flags:\n"
         "      --config string                   rule file (prometheus-adapter format; "
         "required);\n"
         "                                        reloaded when it changes and on SIGHUP\n"
         "      --metrics-relist-interval duration discovery period (default 10m)\n"
         "      --metrics-max-age duration        discovery window (default: the relist "
         "interval)\n"
         "      --discovery-interval duration     in-cluster mode: how often the Kubernetes API's "
         "discovery\n"
         "                                        is read again, to follow CRDs (default 1m)\n"
         "      --discovery-backend string        prometheus, victoriametrics or thanos: the "
         "label-API calls\n"
         "                                        that are cheapest on that server (default "
         "prometheus)\n"
         "      --thanos-replica-label strings    (repeatable) Thanos Query's replica labels, "
         "which its\n"
         "                                        label APIs list but its series do not carry: "
         "left out\n"
         "                                        of discovery\n"
         "      --allowed-credential-dir string   (repeatable) a directory whose files the rule "
         "file's\n"
         "                                        backends may name as token, CA or client "
         "certificate\n"
         "                                        files (default none: only the --prometheus-* "
         "files)\n"
         "      --standalone                      no Kubernetes API: objects from Prometheus, no "
         "delegated\n"
         "                                        authentication, bind 127.0.0.1 by default\n"
         "      --object-cache                    in-cluster: objects from watch caches (default "
         "true;\n"
         "                                        false: a LIST per request, as "
         "prometheus-adapter)\n"
         "      --resource-metrics                serve metrics.k8s.io from resourceRules "
         "(default:\n"
         "                                        when the rule file has them; false leaves it to\n"
         "                                        metrics-server)\n"
         "      --workers int                     server worker threads (default 8)\n"
         "  -v, --v int                           log verbosity (6: log every PromQL query)\n"
         "\n"
         "Prometheus flags (the backend named \"default\"; the rule file may declare more):\n"
         "      --prometheus-url string           base URL, may carry a path prefix "
         "(default https://localhost)\n"
         "      --prometheus-verb string          GET or POST (default GET)\n"
         "      --prometheus-timeout duration     per call, also sent as timeout= (default 10s)\n"
         "      --prometheus-auth-config string   kubeconfig-style auth file\n"
         "      --prometheus-auth-incluster       use the pod's service account\n"
         "      --prometheus-token-file string    bearer token file (re-read on change)\n"
         "      --prometheus-ca-file string       CA bundle for the server\n"
         "      --prometheus-insecure-skip-tls-verify  do not verify the server's certificate\n"
         "      --prometheus-client-tls-cert-file string, --prometheus-client-tls-key-file "
         "string\n"
         "      --prometheus-header Name=Value    extra header, repeatable\n"
         "      --prometheus-sigv4-region string  sign requests with AWS SigV4 (Amazon Managed\n"
         "                                        Prometheus), keys from AWS_ACCESS_KEY_ID,\n"
         "                                        AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN\n"
         "      --prometheus-sigv4-service string  service signed for (default aps)\n"
         "      --prometheus-max-body-bytes int   response size cap (default 52428800)\n"
         "      --prometheus-max-series-body-bytes int  size cap of the /api/v1/series answers\n"
         "                                        discovery decodes as they arrive (default "
         "1073741824)\n"
         "      --metrics-cache-ttl duration      query cache and coalescing window, 0 = no "
         "cache (default 2s)\n"
         "      --metrics-cache-max-bytes int     bytes of query results the cache keeps, the\n"
         "                                        least recently used dropped first (default\n"
         "                                        67108864)\n"
         "\n"
         "External metrics fallback (coexistence with another external-metrics server):\n"
         "      --external-metrics-fallback-url string  https URL of an external.metrics.k8s.io "
         "server;\n"
         "                                        metrics no rule serves are forwarded to it\n"
         "      --external-metrics-fallback-ca-file string, "
         "--external-metrics-fallback-insecure-skip-tls-verify\n"
         "      --external-metrics-fallback-client-cert-file string, "
         "--external-metrics-fallback-client-key-file string\n"
         "                                        front-proxy client certificate the remote "
         "trusts\n"
         "      --external-metrics-fallback-token-file string  bearer token (re-read per request)\n"
         "      --external-metrics-fallback-timeout duration   per forwarded request (default 5s)\n"
         "      --external-metrics-fallback-discovery-ttl duration  remote discovery cache "
         "(default 30s)\n"
         "\n"
         "Serving flags:\n" +
         apiserver::servingFlagsUsage() +
         "\n"
         "Kubernetes flags (in-cluster mode: delegated authentication and authorization, object "
         "lists):\n" +
         auth::delegationFlagsUsage() +
         "\n"
         "prometheus-adapter flags gpuscale does not implement (logging, audit, delegated auth\n"
         "in standalone mode, --rate-interval, --label-prefix, ...) are accepted and ignored with "
         "a "
         "warning.\n";
}

}  // namespace gpuscale::adapter
