// The `serve` command's flags: prometheus-adapter's command line (so existing Deployments start
// unchanged) plus gpuscale's own.
//
//   --config FILE                  rule file (mandatory; without it: "no metrics discovery
//                                  configuration file specified (make sure to use --config)")
//   --metrics-relist-interval D    discovery period, Go duration (10m)
//   --metrics-max-age D            discovery window (0 = the relist interval)
//   --discovery-interval D         in-cluster mode: how often the Kubernetes API's discovery is
//                                  read again (resource_discovery.h), Go duration (1m;
//                                  prometheus-adapter's default is 10m: rules naming a CRD wait
//                                  for it, so gpuscale reads more often)
//   --discovery-backend NAME       prometheus (default), victoriametrics or thanos: the label-API
//                                  calls metric discovery makes (prom::discoveryOptionsFor);
//                                  with thanos, --prometheus-url gets `partial_response=false`
//                                  unless it names the parameter itself (prom/partial_response.h;
//                                  logged as a warning)
//   --thanos-replica-label L[,L]   repeatable: Thanos Query's --query.replica-label names, which
//                                  its label APIs list although deduplicated series do not carry
//                                  them; discovery leaves them out (prom::DiscoveryOptions)
//   --allowed-credential-dir DIR   repeatable: a directory whose files the rule file's backends may
//                                  name as bearerTokenFile/caFile/clientCertFile/clientKeyFile
//                                  (default none: only the --prometheus-* flags' own files;
//                                  credential_file_policy.h)
//   --standalone                   no Kubernetes API: objects come from Prometheus, no delegated
//                                  authentication, bind to 127.0.0.1 unless --bind-address is given
//   --object-cache[=BOOL]          in-cluster: resolve wildcard/selector requests from watch caches
//                                  (default true, cached_object_lister.h); false LISTs from
//                                  kube-apiserver per request, as prometheus-adapter does
//   --resource-metrics[=BOOL]      serve metrics.k8s.io from the rule file's resourceRules
//   (default:
//                                  when the rule file has them at startup; false keeps the group
//                                  to metrics-server)
//   --v N, -v N                    log verbosity (klog levels: >= 6 debug, every PromQL; >= 8
//                                  trace)
// and the --prometheus-* and --metrics-cache-* flags (prom/options.h), the serving flags
// (apiserver/server_options.h; --workers is --worker-threads, 8 by default here), the delegation
// flags (auth/delegation_options.h; in standalone mode accepted and ignored with a warning),
//   --external-metrics-fallback-url URL (https) and its -ca-file, -client-cert-file,
//   -client-key-file, -token-file, -insecure-skip-tls-verify, -timeout D (5s) and
//   -discovery-ttl D (30s): forward external metrics no rule serves to that external-metrics API
//   server (forwarding_external_provider.h)
// Flags prometheus-adapter accepts (or accepted: --logtostderr, --rate-interval, ...) that gpuscale
// does not implement are accepted and ignored, each with a warning, so old manifests keep working.
// Any other flag is an error (the command prints it with the usage and exits 2). Positional
// arguments are ignored, as prometheus-adapter does. All of them are declared on one
// core::FlagSet (serveFlagSet), which also makes `serve --help` and the flag reference.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuscale/adapter/external_metrics_remote.h"
#include "gpuscale/adapter/relister.h"
#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/auth/delegation_options.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/result.h"
#include "gpuscale/prom/discovery.h"
#include "gpuscale/prom/options.h"

namespace gpuscale::adapter {

struct ServeOptions {
  std::string configFile;
  std::vector<std::string> allowedCredentialDirs;
  RelistOptions relist;
  prom::DiscoveryBackend discoveryBackend = prom::DiscoveryBackend::kPrometheus;
  core::Duration discoveryInterval = std::chrono::minutes(1);
  bool standalone = false;
  bool objectCache = true;
  // --resource-metrics; nullopt: serve metrics.k8s.io when the rule file has resourceRules.
  std::optional<bool> resourceMetrics;
  int verbosity = 0;
  prom::PrometheusOptions prometheus;
  apiserver::ServerOptions server;
  ExternalFallbackOptions externalFallback;
  // In-cluster mode: delegated authentication/authorization and the object lister's client.
  auth::DelegationOptions delegation;
  // One line per flag that was accepted but ignored or given by a deprecated name (to be logged
  // as warnings).
  std::vector<std::string> warnings;

  ServeOptions();
  // Declares every flag of `serve` (its sections: adapter, Prometheus, fallback, serving,
  // Kubernetes, ignored) on `flags`, bound to these options.
  void addFlags(core::FlagSet& flags);
};

// The serve command's FlagSet bound to `options`.
core::FlagSet serveFlagSet(ServeOptions& options);

// Parses argv[1..], then completes what depends on several flags (standalone mode binds 127.0.0.1
// unless --bind-address is given and warns about the delegation flags it ignores; --discovery-
// backend=thanos turns partial responses off) and validates (--config given, the Prometheus
// options). Errors are Status::badRequest values whose message is what to print.
core::Result<ServeOptions> parseServeFlags(const std::vector<std::string>& args);

// The flag reference printed by --help and after a flag error.
std::string serveUsage();

}  // namespace gpuscale::adapter
