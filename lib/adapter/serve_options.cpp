#include "gpuscale/adapter/serve_options.h"

#include <array>

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
constexpr std::string_view kUnsupported = "not supported by gpuscale";
constexpr std::string_view kListerKubeconfig =
    "the object lister's kubeconfig is --lister-kubeconfig (default in-cluster)";
constexpr std::string_view kNoKube = "needs the Kubernetes client, not used in this mode";

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
    IgnoredFlag{"kubeconfig", false, kListerKubeconfig},
    IgnoredFlag{"tls-sni-cert-key", false, kUnsupported},
    IgnoredFlag{"permit-port-sharing", true, kUnsupported},
    IgnoredFlag{"permit-address-sharing", true, kUnsupported},
    IgnoredFlag{"profiling", true, kUnsupported},
    IgnoredFlag{"contention-profiling", true, kUnsupported},
    IgnoredFlag{"debug-socket-path", false, kUnsupported},
    IgnoredFlag{"enable-priority-and-fairness", true, kUnsupported},
};

constexpr std::string_view kKubernetesSection =
    "Kubernetes flags (in-cluster mode: delegated authentication and authorization, object lists)";

// The audit flags of k8s.io/apiserver that take no value.
bool isBooleanAuditFlag(std::string_view name) {
  return name == "audit-log-compress" || name == "audit_log_compress" ||
         name.ends_with("throttle-enable") || name.ends_with("truncate-enabled");
}

// What depends on several flags: warnings of the serving layer and of standalone mode, the
// standalone bind address, Thanos' partial responses.
void complete(ServeOptions& options, const core::FlagSet& flags) {
  for (const auto& suite : options.server.tlsCipherSuitesNotOffered) {
    options.warnings.push_back("--tls-cipher-suites: " + suite +
                               " is not offered (CBC cipher or no forward secrecy)");
  }
  if (options.standalone) {
    if (!flags.changed("bind-address")) options.server.bindAddress = "127.0.0.1";
    for (const core::FlagInfo& flag : flags.flags()) {
      if (flag.section == kKubernetesSection && flags.changed(flag.name)) {
        options.warnings.push_back("flag --" + flag.name + " is ignored (" + std::string(kNoKube) +
                                   ")");
      }
    }
  }
  if (std::string warning =
          prom::turnOffThanosPartialResponse(options.prometheus, options.discoveryBackend);
      !warning.empty()) {
    options.warnings.push_back(std::move(warning));
  }
}

}  // namespace

ServeOptions::ServeOptions() { server.workerThreads = 8; }

void ServeOptions::addFlags(core::FlagSet& flags) {
  using core::DurationBound;
  flags.section("Adapter flags");
  flags.addString("config", &configFile,
                  "rule file (prometheus-adapter format; required), reloaded when it changes and "
                  "on SIGHUP");
  flags.addDuration("metrics-relist-interval", &relist.interval, "discovery period");
  flags.addDuration("metrics-max-age", &relist.maxAge, "discovery window")
      .defaultText("the relist interval");
  flags.addDuration("discovery-interval", &discoveryInterval,
                    "in-cluster mode: how often the Kubernetes API's discovery is read again, to "
                    "follow CRDs",
                    DurationBound::kPositive);
  prom::addDiscoveryFlags(flags, &discoveryBackend, &relist.discovery);
  flags
      .addCustom("allowed-credential-dir", "string",
                 "a directory whose files the rule file's backends may name as token, CA or "
                 "client certificate files (default none: only the --prometheus-* files)",
                 [this](std::string_view value) {
                   if (value.empty()) return core::Status::badRequest("empty directory");
                   allowedCredentialDirs.emplace_back(value);
                   return core::Status();
                 })
      .repeatable();
  flags.addBool("standalone", &standalone,
                "no Kubernetes API: objects from Prometheus, no delegated authentication, bind "
                "127.0.0.1 unless --bind-address is given");
  flags.addBool("object-cache", &objectCache,
                "in-cluster: objects of wildcard and selector requests from watch caches (false: "
                "a LIST per request, as prometheus-adapter)");
  flags
      .addOptionalBool("resource-metrics", &resourceMetrics,
                       "serve metrics.k8s.io from resourceRules (false leaves it to "
                       "metrics-server)")
      .defaultText("when the rule file has resourceRules");
  flags.addInt("v", &verbosity, "log verbosity (6: every PromQL query; 8: trace)", 0)
      .shorthand('v');

  flags.section("Prometheus flags",
                "The backend named \"default\"; the rule file may declare more.");
  prometheus.addFlags(flags);

  flags.section("External metrics fallback flags",
                "Coexistence with another external-metrics server (KEDA's, ...).");
  externalFallback.addFlags(flags);

  flags.section("Serving flags");
  server.addFlags(flags);

  flags.section(std::string(kKubernetesSection),
                "Accepted and ignored, with a warning, in standalone mode.");
  delegation.addFlags(flags);

  flags.section("Ignored flags",
                "Flags of prometheus-adapter (and of the klog and k8s.io/apiserver flag sets it "
                "embeds) that gpuscale accepts without acting on them, with one warning each, so "
                "existing manifests start.");
  for (const IgnoredFlag& flag : kIgnored) {
    flags.addIgnored(std::string(flag.name), flag.boolean, std::string(flag.why))
        .acceptUnderscores();
  }
  flags.addIgnoredPrefix("audit-", isBooleanAuditFlag, std::string(kUnsupported));
}

core::FlagSet serveFlagSet(ServeOptions& options) {
  core::FlagSet flags("gpuscale-adapter serve", "gpuscale-adapter [serve] --config FILE [flags]",
                      "Serves custom.metrics.k8s.io and external.metrics.k8s.io (and "
                      "metrics.k8s.io from resourceRules) from Prometheus. Positional arguments "
                      "are ignored, as prometheus-adapter does.");
  options.addFlags(flags);
  return flags;
}

core::Result<ServeOptions> parseServeFlags(const std::vector<std::string>& args) {
  ServeOptions options;
  core::FlagSet flags = serveFlagSet(options);
  auto positional = flags.parse(args);
  if (!positional) return positional.status();
  options.warnings = flags.warnings();
  complete(options, flags);
  if (options.configFile.empty()) {
    return core::Status::badRequest(
        "no metrics discovery configuration file specified (make sure to use --config)");
  }
  if (core::Status valid = options.prometheus.validate(); !valid.ok()) return valid;
  return options;
}

std::string serveUsage() {
  ServeOptions options;
  return serveFlagSet(options).usage();
}

}  // namespace gpuscale::adapter
