#include "run_command.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpu_mapping_flags.h"
#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/auth/secure_status_server.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_args.h"
#include "gpuscale/core/signals.h"
#include "gpuscale/kube/client_metrics.h"
#include "gpuscale/kube/config.h"
#include "gpuscale/kube/rest_client.h"
#include "gpuscale/prom/caching_client.h"
#include "gpuscale/prom/client_metrics.h"
#include "gpuscale/prom/http_client.h"
#include "gpuscale/prom/observed_client.h"
#include "gpuscale/prom/options.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"
#include "gpuscale/reconciler/fenced_client.h"
#include "gpuscale/reconciler/leader_election.h"
#include "gpuscale/reconciler/lease_fence.h"
#include "gpuscale/reconciler/status_pages.h"

namespace gpuscale::reconciler {
namespace {

constexpr int kBadUsage = 2;

struct RunArgs {
  std::string kubeconfig;
  std::string config;
  bool stateNamespaceSet = false;
  std::string healthBind = "0.0.0.0:8081";
  // The secure status listener (/plan, /leader, /metrics): "" = off.
  std::string secureStatusBind = "0.0.0.0:8443";
  auth::SecureStatusOptions status;
  bool dryRun = false;
  bool leaderElect = true;
  ActuatorOptions actuator;
  ControllerOptions controller;
  LeaderElectionOptions lease;
  std::string gpuMapping = "node";  // node | dcgm
  prom::PrometheusOptions prometheus;
  bool prometheusUrlSet = false;
  DcgmMappingOptions dcgm;
};

template <typename D>
bool parseDuration(const std::string& text, D& out) {
  auto d = core::parseGoDuration(text);
  if (!d || d->count() < 0) return false;
  out = std::chrono::duration_cast<D>(*d);
  return true;
}

std::string defaultIdentity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return fmt::format("{}_{:08x}", host, std::random_device{}());
}

std::optional<RunArgs> parseArgs(const std::vector<std::string>& all, std::ostream& err) {
  RunArgs a;
  a.lease.identity = defaultIdentity();
  a.status.server.certDir.clear();  // a generated pair in memory: the root file system is read-only
  a.status.server.workerThreads = 1;
  a.status.server.maxRequestsInFlight = 32;
  a.status.server.maxConnections = 64;
  a.status.server.requestTimeout = std::chrono::seconds(30);
  a.status.server.shutdownTimeout = std::chrono::seconds(5);
  // The status listener must not keep the controller from running: without the authentication
  // ConfigMap, bearer tokens (what Prometheus sends) still work; client certificates then need
  // --client-ca-file.
  a.status.delegation.tolerateLookupFailure = true;
  std::vector<std::string> args;
  auto prometheus = prom::parsePrometheusFlags(all, &args);
  if (!prometheus) {
    err << "gpuscale-reconciler run: " << prometheus.status().message() << "\n";
    return std::nullopt;
  }
  a.prometheus = *prometheus;
  for (const auto& arg : all) {
    if (arg.rfind("--prometheus-url", 0) == 0) a.prometheusUrlSet = true;
  }
  core::FlagCallbacks flags;
  flags.isBoolean = [](std::string_view name) {
    return name == "dry-run" || name == "leader-elect" || auth::isBooleanDelegationFlag(name);
  };
  flags.apply = [&](std::string_view name, std::string_view text) -> core::Result<bool> {
    const std::string value(text);
    const std::string flag = "--" + std::string(name);
    bool ok = true;
    if (name == "dry-run" || name == "leader-elect") {
      ok = value == "true" || value == "false";
      (name == "dry-run" ? a.dryRun : a.leaderElect) = value == "true";
      if (!ok) return core::Status::badRequest(flag + " takes true or false");
    } else if (name == "kubeconfig") {
      a.kubeconfig = value;
    } else if (name == "config") {
      a.config = value;
    } else if (name == "health-bind-address") {
      a.healthBind = value;
    } else if (name == "secure-status-bind-address") {
      a.secureStatusBind = value;
      ok = value.empty() || apiserver::splitHostPort(value).ok();
    } else if (name == "status-cert-dir") {
      a.status.server.certDir = value;
    } else if (name == "status-tls-cert-file") {
      a.status.server.tlsCertFile = value;
    } else if (name == "status-tls-private-key-file") {
      a.status.server.tlsPrivateKeyFile = value;
    } else if (auth::isStatusAuthFlag(name)) {
      auto applied = auth::applyDelegationFlag(a.status.delegation, name, text);
      if (!applied) return applied.status();
    } else if (name == "operator-namespace") {
      a.actuator.operatorNamespace = a.controller.operatorNamespace = value;
    } else if (name == "mig-config-map") {
      a.actuator.migConfigMap = value;
    } else if (name == "default-mig-config-map") {
      a.actuator.defaultMigConfigMap = value;
    } else if (name == "device-plugin-config-map") {
      a.actuator.devicePluginConfigMap = value;
    } else if (name == "max-nodes-in-flight") {
      a.actuator.maxNodesInFlight = std::atoi(value.c_str());
      ok = a.actuator.maxNodesInFlight >= 1;
    } else if (name == "mig-timeout") {
      ok = parseDuration(value, a.actuator.migTimeout);
    } else if (name == "allocatable-timeout") {
      ok = parseDuration(value, a.actuator.allocatableTimeout);
    } else if (name == "failure-backoff") {
      ok = parseDuration(value, a.actuator.failureBackoff);
    } else if (name == "resync-period") {
      ok = parseDuration(value, a.controller.resyncPeriod);
    } else if (name == "leader-elect-namespace") {
      a.lease.ns = value;
    } else if (name == "state-namespace") {
      a.controller.state.ns = value;
      a.stateNamespaceSet = ok = !value.empty();
    } else if (name == "state-config-map") {
      a.controller.state.name = value;
      ok = !value.empty();
    } else if (name == "state-max-entries") {
      a.controller.state.maxEntries = std::atoi(value.c_str());
      ok = a.controller.state.maxEntries >= 1;
    } else if (name == "state-max-bytes") {
      const long long bytes = std::atoll(value.c_str());
      ok = bytes >= 1024 && bytes <= 1000 * 1024;  // a ConfigMap holds at most 1 MiB
      a.controller.state.maxBytes = ok ? static_cast<std::size_t>(bytes) : 0;
    } else if (name == "leader-elect-name") {
      a.lease.name = value;
    } else if (name == "leader-elect-identity") {
      a.lease.identity = value;
    } else if (name == "lease-duration") {
      ok = parseDuration(value, a.lease.leaseDuration);
    } else if (name == "renew-deadline") {
      ok = parseDuration(value, a.lease.renewDeadline);
    } else if (name == "retry-period") {
      ok = parseDuration(value, a.lease.retryPeriod);
    } else if (auto mapping = applyGpuMappingFlag(a.gpuMapping, a.dcgm, name, value)) {
      ok = *mapping;
    } else {
      return false;
    }
    if (!ok) return core::Status::badRequest("bad value \"" + value + "\" for " + flag);
    return true;
  };
  auto rest = core::applyFlags(args, flags);
  if (!rest) {
    err << "gpuscale-reconciler run: " << rest.status().message() << "\n";
    return std::nullopt;
  }
  if (!rest->empty()) {
    err << "gpuscale-reconciler run: unknown flag " << rest->front() << "\n" << runUsage();
    return std::nullopt;
  }
  if (a.lease.renewDeadline >= a.lease.leaseDuration) {
    err << "gpuscale-reconciler run: --renew-deadline must be below --lease-duration\n";
    return std::nullopt;
  }
  if (a.status.server.tlsCertFile.empty() != a.status.server.tlsPrivateKeyFile.empty()) {
    err << "gpuscale-reconciler run: --status-tls-cert-file and --status-tls-private-key-file go "
           "together\n";
    return std::nullopt;
  }
  if (!a.secureStatusBind.empty()) {
    auto [host, port] = *apiserver::splitHostPort(a.secureStatusBind);
    a.status.server.bindAddress = host;
    a.status.server.securePort = port;
  }
  // Reviews go through the reconciler's own kubeconfig unless the flags name others.
  auto& delegation = a.status.delegation;
  if (delegation.authenticationKubeconfig.empty())
    delegation.authenticationKubeconfig = a.kubeconfig;
  if (delegation.authorizationKubeconfig.empty()) delegation.authorizationKubeconfig = a.kubeconfig;
  if (a.gpuMapping == "dcgm" && !a.prometheusUrlSet) {
    err << "gpuscale-reconciler run: --gpu-mapping=dcgm needs --prometheus-url\n";
    return std::nullopt;
  }
  a.controller.dryRun = a.dryRun;
  if (!a.stateNamespaceSet) {
    // The reconciler's own namespace: the pod's (downward API), else the Lease's.
    const char* pod = std::getenv("POD_NAMESPACE");
    a.controller.state.ns = pod != nullptr && *pod != '\0' ? pod : a.lease.ns;
  }
  return a;
}

// The secure listener's pages as routes of the status server.
std::map<std::string, apiserver::ExtraRoute> statusRoutes(const StatusSource& source) {
  std::map<std::string, apiserver::ExtraRoute> routes;
  for (const char* path : {"/plan", "/leader"}) {
    routes[path] = [source, path](const apiserver::HttpRequest&, const apiserver::QueryParams&,
                                  const apiserver::UserInfo&) {
      core::PlainHttpReply page = *statusPage(path, source);
      apiserver::HttpResponse response;
      response.status = page.status;
      response.contentType = std::move(page.contentType);
      response.body = std::move(page.body);
      return response;
    };
  }
  return routes;
}

}  // namespace

std::string runUsage() {
  return "usage: gpuscale-reconciler run [--kubeconfig PATH] [--config POLICY.yaml] [--dry-run]\n"
         "    [--operator-namespace gpu-operator] [--mig-config-map gpuscale-mig-parted-config]\n"
         "    [--default-mig-config-map default-mig-parted-config]\n"
         "    [--device-plugin-config-map device-plugin-config] [--max-nodes-in-flight 1]\n"
         "    [--mig-timeout 10m] [--allocatable-timeout 5m] [--failure-backoff 15m]\n"
         "    [--resync-period 30s] [--health-bind-address 0.0.0.0:8081]\n"
         "    [--secure-status-bind-address 0.0.0.0:8443] [--status-cert-dir DIR]\n"
         "    [--status-tls-cert-file FILE --status-tls-private-key-file FILE]\n"
         "    [--authentication-kubeconfig PATH] [--authorization-kubeconfig PATH]\n"
         "    [--client-ca-file FILE] [the other --authentication-*, --authorization-* and\n"
         "     --requestheader-* flags of gpuscale-adapter serve]\n"
         "    [--leader-elect=true|false] [--leader-elect-namespace default]\n"
         "    [--leader-elect-name gpuscale-reconciler] [--leader-elect-identity ID]\n"
         "    [--lease-duration 15s] [--renew-deadline 10s] [--retry-period 2s]\n"
         "    [--state-namespace $POD_NAMESPACE|<leader-elect-namespace>]\n"
         "    [--state-config-map gpuscale-reconciler-state] [--state-max-entries 1000]\n"
         "    [--state-max-bytes 524288]\n"
         "    [--gpu-mapping node|dcgm] [--prometheus-url URL and the other --prometheus-* flags]\n"
         "    [--dcgm-metric DCGM_FI_DEV_FB_USED] [--dcgm-node-labels Hostname,hostname]\n"
         "    [--dcgm-gpu-label gpu] [--dcgm-pod-label pod] [--dcgm-namespace-label namespace]\n"
         "    [--dcgm-max-age 2m] [--dcgm-settle 90s]\n"
         "    [--dcgm-utilization-metric DCGM_FI_PROF_GR_ENGINE_ACTIVE]\n"
         "\n"
         "  run    watch HPAs annotated gpuscale.io/partition-policy and grow their GPU "
         "partitions\n"
         "         through the GPU Operator. Probes (/healthz, /livez, /readyz) on the plain\n"
         "         --health-bind-address; /metrics, /plan and /leader on the HTTPS\n"
         "         --secure-status-bind-address for callers a TokenReview and a\n"
         "         SubjectAccessReview (verb get on the path) allow.\n";
}

int runRunCommand(const std::vector<std::string>& args, std::ostream& err) {
  auto parsed = parseArgs(args, err);
  if (!parsed) return kBadUsage;
  RunArgs& a = *parsed;
  const core::StopSignals stopSignals;  // before any client starts a thread
  auto policies = PolicySource::open(a.config);
  if (!policies) {
    err << "gpuscale-reconciler run: " << policies.status().message() << "\n";
    return kBadUsage;
  }
  if (a.config.empty()) {
    spdlog::warn(
        "no --config: no partition policy is configured, so no HPA is managed and no node is "
        "changed; give a policy file whose policies name the namespaces they may manage "
        "(hpaNamespaces)");
  }
  auto config = kube::loadClientConfig(a.kubeconfig);
  if (!config) {
    err << "gpuscale-reconciler run: " << config.status().message() << "\n";
    return kBadUsage;
  }
  config->userAgent = "gpuscale-reconciler";
  config->qps = 20;
  config->burst = 40;
  auto registry = std::make_shared<prometheus::Registry>();
  // Counts the 429s the client retries for the write in progress (retried_writes.h).
  config->observer =
      std::make_shared<ThrottleNotingObserver>(std::make_shared<kube::KubeClientMetrics>(registry));
  auto metrics = std::make_shared<ReconcilerMetrics>(registry);
  std::unique_ptr<LeaderElector> elector;
  if (a.leaderElect && !a.dryRun) {
    // The Lease gets a client (and so a rate limiter) of its own: renewals must not queue behind
    // the controller's lists and writes, or a busy pass could cost the lease. It is never fenced.
    kube::ClientConfig leaseConfig = *config;
    leaseConfig.userAgent = "gpuscale-reconciler/leader-election";
    leaseConfig.qps = 5;
    leaseConfig.burst = 10;
    leaseConfig.writeFence = nullptr;
    auto leaseClient = kube::RestKubeClient::create(leaseConfig);
    if (!leaseClient) {
      err << "gpuscale-reconciler run: " << leaseClient.status().message() << "\n";
      return kBadUsage;
    }
    elector = std::make_unique<LeaderElector>(*leaseClient, a.lease, metrics);
  }
  const LeaderElector* le = elector.get();
  // Every attempt of every write (after the rate limiter, between retries) asks the Lease too
  // (lease_fence.h): a write that began while this replica led is not sent once it no longer does.
  if (le != nullptr) {
    config->writeFence = std::make_shared<LeaseFence>([le] { return le->leadershipLeft(); });
  }
  auto client = kube::RestKubeClient::create(*config);
  if (!client) {
    err << "gpuscale-reconciler run: " << client.status().message() << "\n";
    return kBadUsage;
  }
  auto isLeader = [le] { return le == nullptr || le->isLeader(); };
  // Every write (the controller's, the actuator's, Events) goes out through the fence, which asks
  // the elector right before sending (fenced_client.h).
  std::shared_ptr<kube::KubeClient> kc = std::make_shared<FencedKubeClient>(*client, isLeader);
  // The controller's and the actuator's writes note what they retried; Events go through the
  // fenced client only.
  auto retried = std::make_shared<RetriedWrites>(metrics);
  auto writer = std::make_shared<RetryNotingClient>(kc, retried);
  std::shared_ptr<EventRecorder> events;
  if (a.dryRun) {
    events = std::make_shared<MemoryEventRecorder>();
  } else {
    events = std::make_shared<KubeEventRecorder>(kc, a.lease.identity);
  }
  // The actuator's check right before a MIG change asks Prometheus afresh; planning passes go
  // through the query cache (--metrics-cache-ttl) so bursts of passes ask once.
  std::shared_ptr<GpuPodMapping> actuatorGpuPods = std::make_shared<NodeLevelGpuPodMapping>();
  std::shared_ptr<GpuPodMapping> plannerGpuPods;
  if (a.gpuMapping == "dcgm") {
    auto prometheus = prom::HttpClient::create(a.prometheus);
    if (!prometheus) {
      err << "gpuscale-reconciler run: " << prometheus.status().message() << "\n";
      return kBadUsage;
    }
    auto direct = std::make_shared<prom::ObservedClient>(
        std::shared_ptr<prom::Client>(std::move(*prometheus)),
        std::make_shared<prom::ClientMetrics>(*registry, "gpuscale_reconciler"));
    prom::CacheOptions cache;
    cache.ttl = a.prometheus.cacheTtl;
    actuatorGpuPods = std::make_shared<DcgmGpuPodMapping>(direct, a.dcgm, metrics);
    plannerGpuPods = std::make_shared<DcgmGpuPodMapping>(
        std::make_shared<prom::CachingClient>(direct, cache), a.dcgm, metrics);
  }
  auto actuator =
      std::make_shared<KubeActuator>(writer, events, actuatorGpuPods, a.actuator, metrics);
  Controller controller(writer, actuator, *policies, events, metrics, a.controller, plannerGpuPods,
                        retried);
  std::atomic<bool> lostLeadership{false};
  if (elector) {
    elector->run([&] { controller.trigger(); },
                 [&] {
                   spdlog::error("leader election: lost the lease; exiting");
                   lostLeadership.store(true);
                 });
  }
  const bool leaderElect = a.leaderElect && !a.dryRun;
  StatusSource source;
  source.synced = [&controller] { return controller.synced(); };
  source.lastPlanJson = [&controller] { return controller.lastPlanJson(); };
  source.leader = [le, leaderElect] { return !leaderElect || (le != nullptr && le->isLeader()); };
  apiserver::PlainListenerOptions probes;
  probes.name = "probes";
  probes.registry = registry;
  auto health = apiserver::PlainHttpListener::start(
      a.healthBind, [source](std::string_view path) { return probeReply(path, source); }, probes);
  if (!health) {
    err << "gpuscale-reconciler run: " << health.status().message() << "\n";
    return kBadUsage;
  }
  std::unique_ptr<auth::SecureStatusServer> status;
  if (!a.secureStatusBind.empty()) {
    auth::StatusPages pages;
    pages.routes = statusRoutes(source);
    pages.registry = registry;
    pages.health = std::make_shared<apiserver::HealthChecks>();
    pages.health->add(
        "informers-synced",
        [source] {
          return source.synced() ? core::Status()
                                 : core::Status::unavailable("informers not synced");
        },
        apiserver::HealthChecks::kReadyz);
    auto started = auth::SecureStatusServer::start(a.status, std::move(pages));
    if (!started) {
      err << "gpuscale-reconciler run: " << started.status().message() << "\n";
      return kBadUsage;
    }
    status = std::move(*started);
  }
  controller.start(isLeader);
  spdlog::info(
      "gpuscale-reconciler running (identity {}, dry run {}, probes on port {}, status on HTTPS "
      "port {})",
      a.lease.identity, a.dryRun, (*health)->port(), status ? status->port() : 0);
  stopSignals.wait([&] { return lostLeadership.load(); });
  controller.stop();
  if (elector) {
    elector->stop();
    elector->release();
  }
  if (status) status->stop();
  (*health)->stop();
  return lostLeadership.load() ? 1 : 0;
}

}  // namespace gpuscale::reconciler
