#include "serve_command.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <ostream>

#include "gpuscale/adapter/cached_object_lister.h"
#include "gpuscale/adapter/config_reloader.h"
#include "gpuscale/adapter/custom_provider.h"
#include "gpuscale/adapter/explain_endpoint.h"
#include "gpuscale/adapter/external_provider.h"
#include "gpuscale/adapter/forwarding_external_provider.h"
#include "gpuscale/adapter/kube_object_lister.h"
#include "gpuscale/adapter/resource_discovery.h"
#include "gpuscale/adapter/resource_provider.h"
#include "gpuscale/adapter/serve_options.h"
#include "gpuscale/adapter/standalone_object_lister.h"
#include "gpuscale/apiserver/serve.h"
#include "gpuscale/auth/delegation_options.h"
#include "gpuscale/auth/serving_client_cas.h"
#include "gpuscale/core/signals.h"
#include "gpuscale/kube/client_metrics.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {
namespace {

constexpr int kUsageError = 2;

void configureLogging(int verbosity) {
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%L%$ %v", spdlog::pattern_time_type::utc);
  if (verbosity >= 8) {
    spdlog::set_level(spdlog::level::trace);
  } else if (verbosity >= 6) {
    spdlog::set_level(spdlog::level::debug);
  } else {
    spdlog::set_level(spdlog::level::info);
  }
}

// Who may call and how objects are found: in-cluster, delegated authentication/authorization
// and LISTs against kube-apiserver; standalone, everyone is allowed and objects come from
// Prometheus (null lister and authenticators).
struct ObjectAccess {
  auth::DelegatedAuth auth;
  std::shared_ptr<ObjectLister> lister;
  std::shared_ptr<kube::KubeClient> kube;  // in-cluster only
};

core::Result<ObjectAccess> buildObjectAccess(
    ServeOptions& options, const auth::DelegationOptions& delegation,
    const std::shared_ptr<prometheus::Registry>& registry) {
  ObjectAccess access;
  if (options.standalone) {
    spdlog::warn(
        "standalone mode: delegated authentication and authorization are off, every client is "
        "allowed; objects are resolved from Prometheus");
    return access;
  }
  auto built = auth::buildDelegatedAuth(delegation);
  if (!built) return built.status();
  access.auth = std::move(*built);
  auto lister = auth::buildListerClient(delegation);
  if (!lister) return lister.status();
  access.kube = *lister;
  if (options.objectCache) {
    access.lister = std::make_shared<CachedObjectLister>(std::move(*lister), registry);
  } else {
    access.lister = std::make_shared<KubeObjectLister>(std::move(*lister));
  }
  spdlog::info("in-cluster mode: delegated authentication and authorization; objects {}",
               options.objectCache ? "from watch caches of the Kubernetes API"
                                   : "listed from the Kubernetes API per request");
  return access;
}

// In-cluster, rules and requests name any resource the cluster serves (API discovery, followed
// while serving); standalone, the built-in table.
std::unique_ptr<ResourceDiscovery> buildResourceDiscovery(
    const ObjectAccess& access, const std::shared_ptr<prometheus::Registry>& registry,
    ReloadSettings& reload) {
  if (!access.kube) return nullptr;
  auto discovery = std::make_unique<ResourceDiscovery>(access.kube, registry);
  discovery->refreshOnce();
  reload.mapper = &discovery->mapper();
  reload.compile.unknownOverridesWarn = true;
  return discovery;
}

void followResourceDiscovery(ResourceDiscovery* discovery, core::Duration interval,
                             const std::shared_ptr<ConfigReloader>& reloader) {
  if (discovery == nullptr) return;
  discovery->start(interval, [reloader] {
    spdlog::info("the resources the cluster serves changed: compiling the rules again");
    (void)reloader->reload();  // logs and counts its own outcome
  });
}

}  // namespace

int runServeCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::vector<std::string>& words = args;
  if (core::asksForHelp(words)) {
    out << serveUsage();
    return 0;
  }
  // Block the termination and reload signals before any thread exists (the HTTP client's pool
  // starts early), so every thread inherits the mask and serveUntilTerminated() alone receives
  // them.
  // SIGHUP is read by the rule file watcher (config_watcher.h).
  const core::StopSignals stopSignals({SIGTERM, SIGINT}, {SIGHUP});

  auto options = parseServeFlags(words);
  if (!options) {
    err << "Error: " << options.status().message() << "\n" << serveUsage();
    return kUsageError;
  }
  configureLogging(options->verbosity);
  for (const std::string& warning : options->warnings) spdlog::warn("{}", warning);
  // One /metrics registry; the Kubernetes clients (delegation, listing) report to it too.
  auto registry = std::make_shared<prometheus::Registry>();
  auth::DelegationOptions& delegation = options->delegation;
  if (!options->standalone) {
    delegation.observer = std::make_shared<kube::KubeClientMetrics>(registry);
    delegation.reviewCacheMetrics = std::make_shared<auth::ReviewCacheMetrics>(registry);
    delegation.reviewLimiter =
        std::make_shared<auth::ReviewLimiter>(delegation.reviewLimits, registry);
  }
  auto access = buildObjectAccess(*options, delegation, registry);
  if (!access) {
    err << "Error: " << access.status().message() << "\n";
    return kUsageError;
  }

  ReloadSettings reload;
  reload.configFile = options->configFile;
  const std::unique_ptr<ResourceDiscovery> discovery =
      buildResourceDiscovery(*access, registry, reload);
  const k8s::ResourceMapper& mapper = *reload.mapper;
  reload.prometheus = options->prometheus;
  reload.relist = options->relist;
  reload.registry = registry;
  auto credentialFiles = CredentialFilePolicy::create(
      options->allowedCredentialDirs, flagCredentialFiles(options->prometheus), registry);
  if (!credentialFiles) {
    err << "Error: " << credentialFiles.status().message() << "\n";
    return kUsageError;
  }
  reload.credentialFiles = *credentialFiles;
  auto status = std::make_shared<RuleStatus>(registry);
  reload.status = status;
  auto reloader = ConfigReloader::create(std::move(reload));
  if (!reloader) {
    err << reloader.status().message() << "\n";
    return kUsageError;
  }
  std::shared_ptr<const rules::RuleSet> ruleSet = (*reloader)->rules();
  const std::shared_ptr<const Backend>& fallback = (*reloader)->defaultBackend();
  auto runner =
      std::make_shared<QueryRunner>(fallback->cache(), fallback->cache(), registry, status);
  SnapshotSource snapshots = [reloader = *reloader] { return reloader->snapshot(); };

  apiserver::ApiHandlerConfig config;
  config.registry = registry;
  // Both groups are served whatever the rules hold now: rules added by a reload are served at
  // once, and an APIService registered for a group without rules stays Available (an empty list)
  // instead of failing kube-apiserver's discovery of that group (and with it every client's).
  std::shared_ptr<ObjectLister> lister = access->lister;
  if (!lister) lister = std::make_shared<StandaloneObjectLister>(runner);
  config.customMetrics = std::make_shared<CustomProvider>(snapshots, mapper, lister, runner);
  config.externalMetrics = std::make_shared<ExternalProvider>(snapshots, runner, registry);
  auto external =
      withExternalFallback(std::move(config.externalMetrics), options->externalFallback, registry);
  if (!external) {
    err << "Error: " << external.status().message() << "\n";
    return kUsageError;
  }
  config.externalMetrics = std::move(*external);
  // metrics.k8s.io: by default only when the rule file has resourceRules (prometheus-adapter
  // installs the API only then); --resource-metrics=false leaves it to metrics-server.
  if (options->resourceMetrics.value_or(ruleSet->resourceRules.has_value())) {
    config.resourceMetrics = std::make_shared<ResourceProvider>(
        [reloader = *reloader] { return reloader->rules(); }, mapper, lister, runner);
    spdlog::info("serving metrics.k8s.io/v1beta1 from resourceRules{}",
                 ruleSet->resourceRules ? "" : " (none in the rule file yet: requests fail)");
  }
  config.extraRoutes.emplace(
      std::string(kExplainPath),
      explainRoute({[reloader = *reloader] {
                      auto [rules, backends] = reloader->rulesAndBackends();
                      return ExplainSource{std::move(rules), std::move(backends)};
                    },
                    status, (*reloader)->relistOptions().maxAge, access->auth.authorizer,
                    (*reloader)->relistOptions().discovery}));
  config.authenticator = access->auth.authenticator;
  config.authorizer = access->auth.authorizer;
  config.health = std::make_shared<apiserver::HealthChecks>();
  config.health->add(
      "metrics-discovery",
      [reloader = *reloader] {
        return reloader->ready()
                   ? core::Status()
                   : core::Status::unavailable("the first metric discovery has not finished");
      },
      apiserver::HealthChecks::kReadyz);

  RelistOptions relist = (*reloader)->relistOptions();
  spdlog::info(
      "rules from {} (watched; reloaded on change and SIGHUP): {} custom, {} external, {} "
      "backends; relist every {} (max age {}); Prometheus {}",
      options->configFile, ruleSet->rules.size(), ruleSet->externalRules.size(),
      ruleSet->backends.size() + 1, core::formatGoDuration(relist.interval),
      core::formatGoDuration(relist.maxAge), options->prometheus.url);
  // The listener asks for client certificates of every CA the authenticator trusts (flags and
  // the authentication ConfigMap) and follows their changes and certificate rotation.
  auto tls = auth::servingTlsWithClientCas(options->server, access->auth.config, registry);
  if (!tls) {
    err << "Error: serving certificate: " << tls.status().message() << "\n";
    return 1;
  }
  int code = apiserver::serveUntilTerminated(
      options->server, std::move(config),
      [reloader = *reloader, &discovery, &options](apiserver::ApiHandler&) {
        reloader->start();
        followResourceDiscovery(discovery.get(), options->discoveryInterval, reloader);
      },
      *tls);
  if (discovery) discovery->stop();
  (*reloader)->stop();
  return code;
}

}  // namespace gpuscale::adapter
