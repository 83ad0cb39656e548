#include "run_command.h"

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "command_client.h"
#include "gpu_mapping_flags.h"
#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/auth/secure_status_server.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/heap_reclaimer.h"
#include "gpuscale/core/signals.h"
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
#include "gpuscale/reconciler/observe_mode.h"
#include "gpuscale/reconciler/status_pages.h"
#include "plan_command.h"

namespace gpuscale::reconciler {
namespace {

constexpr int kBadUsage = 2;

struct RunArgs {
  std::string kubeconfig;
  std::string config;
  std::string healthBind = "0.0.0.0:8081";
  // The secure status listener (/plan, /leader, /metrics): "" = off.
  std::string secureStatusBind = "0.0.0.0:8443";
  auth::SecureStatusOptions status;
  bool dryRun = false;
  RunMode mode = RunMode::kAct;
  bool leaderElect = true;
  ActuatorOptions actuator;
  ControllerOptions controller;
  LeaderElectionOptions lease;
  std::string gpuMapping = "node";  // node | dcgm
  prom::PrometheusOptions prometheus;
  DcgmMappingOptions dcgm;

  RunArgs() {
    status.server.certDir.clear();  // a generated pair in memory: the root file system is read-only
    status.server.workerThreads = 1;
    status.server.maxRequestsInFlight = 32;
    status.server.maxConnections = 64;
    status.server.requestTimeout = std::chrono::seconds(30);
    status.server.shutdownTimeout = std::chrono::seconds(5);
    // The status listener must not keep the controller from running: without the authentication
    // ConfigMap, bearer tokens (what Prometheus sends) still work; client certificates then need
    // --client-ca-file.
    status.delegation.tolerateLookupFailure = true;
  }
};

std::string defaultIdentity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return fmt::format("{}_{:08x}", host, std::random_device{}());
}

core::FlagSet runFlagSet(RunArgs& a) {
  using core::DurationBound;
  core::FlagSet flags("gpuscale-reconciler run", "gpuscale-reconciler run [flags]",
                      "Watches HPAs annotated gpuscale.io/partition-policy and grows their GPU "
                      "partitions through the GPU Operator. Probes (/healthz, /livez, /readyz) on "
                      "the plain --health-bind-address; /metrics, /plan and /leader on the HTTPS "
                      "--secure-status-bind-address for callers a TokenReview and a "
                      "SubjectAccessReview (verb get on the path) allow.");
  flags.section("Controller flags");
  addKubeconfigFlag(flags, &a.kubeconfig);
  addPolicyFileFlag(flags, &a.config, "without it no HPA is managed and no node changed");
  flags.addBool("dry-run", &a.dryRun, "plan, but write nothing (Events kept in memory)");
  flags.addChoice("mode", &a.mode,
                  "act: change partitions and maxReplicas; observe: plan, record WouldAct Events "
                  "and serve the pages, but change no node, HPA or ConfigMap",
                  {{"act", RunMode::kAct}, {"observe", RunMode::kObserve}});
  flags.addDuration("resync-period", &a.controller.resyncPeriod,
                    "a pass at least this often, events or not");
  flags.addBool("trim-cached-objects", &a.controller.trimCachedObjects,
                "keep only the fields the planner reads of each cached object (false: whole "
                "objects, for measuring what trimming saves)");
  flags.section("GPU Operator flags");
  flags.addString("operator-namespace", &a.actuator.operatorNamespace,
                  "the GPU Operator's namespace (its ConfigMaps)");
  flags.addString(
      "mig-config-map", &a.actuator.migConfigMap,
      "the mig-parted ConfigMap gpuscale writes (ClusterPolicy migManager.config.name)");
  flags.addString("default-mig-config-map", &a.actuator.defaultMigConfigMap,
                  "the GPU Operator's own mig-parted ConfigMap");
  flags.addString("device-plugin-config-map", &a.actuator.devicePluginConfigMap,
                  "the device plugin's ConfigMap (ClusterPolicy devicePlugin.config)");
  flags.addInt("max-nodes-in-flight", &a.actuator.maxNodesInFlight, "node operations at once", 1);
  flags.addDuration("mig-timeout", &a.actuator.migTimeout,
                    "bound on a MIG change (mig.config.state success)");
  flags.addDuration("mig-config-propagation", &a.actuator.migConfigPropagation,
                    "wait from adding a MIG config to the mig-parted ConfigMap to flipping the "
                    "node's label (mig-manager reads a mounted copy the kubelet refreshes within "
                    "about a minute; the chart and manifests set 90s)");
  flags.addDuration("allocatable-timeout", &a.actuator.allocatableTimeout,
                    "bound on the new partitions showing in allocatable");
  flags.addDuration("failure-backoff", &a.actuator.failureBackoff,
                    "how long a node is left alone after a failed operation");
  flags.section("State flags");
  flags
      .addNonEmptyString("state-namespace", &a.controller.state.ns,
                         "namespace of the state ConfigMap")
      .defaultText("$POD_NAMESPACE, else --leader-elect-namespace");
  flags.addNonEmptyString("state-config-map", &a.controller.state.name,
                          "the ConfigMap that keeps each HPA's record");
  flags.addInt("state-max-entries", &a.controller.state.maxEntries, "records kept at most", 1);
  flags.addInt("state-max-bytes", &a.controller.state.maxBytes,
               "bytes of records kept at most (a ConfigMap holds 1 MiB)", 1024, 1000 * 1024);
  flags.addInt("state-max-entries-per-namespace", &a.controller.state.maxEntriesPerNamespace,
               "records kept at most for the HPAs of one namespace", 1);
  flags.addInt("state-max-bytes-per-namespace", &a.controller.state.maxBytesPerNamespace,
               "bytes of records kept at most for the HPAs of one namespace", 1024, 1000 * 1024);
  flags.section("Leader election flags");
  flags.addBool("leader-elect", &a.leaderElect, "act only while holding the Lease");
  flags.addString("leader-elect-namespace", &a.lease.ns, "namespace of the Lease");
  flags.addString("leader-elect-name", &a.lease.name, "name of the Lease");
  flags.addString("leader-elect-identity", &a.lease.identity, "this replica's name in the Lease")
      .defaultText("HOSTNAME_RANDOM");
  flags.addDuration("lease-duration", &a.lease.leaseDuration, "how long a Lease holds");
  flags.addDuration("renew-deadline", &a.lease.renewDeadline,
                    "the leader gives up when it could not renew within it");
  flags.addDuration("retry-period", &a.lease.retryPeriod, "how often the Lease is tried");
  flags.section("Status listener flags");
  flags.addString("health-bind-address", &a.healthBind,
                  "host:port of the plain-HTTP probes (/healthz, /livez, /readyz)");
  flags
      .addCustom("secure-status-bind-address", "string",
                 "host:port of the HTTPS /metrics, /plan and /leader (\"\" = off)",
                 [&a](std::string_view value) {
                   if (!value.empty()) {
                     if (auto split = apiserver::splitHostPort(value); !split) {
                       return split.status();
                     }
                   }
                   a.secureStatusBind = std::string(value);
                   return core::Status();
                 })
      .defaultText(a.secureStatusBind);
  flags.addString("status-cert-dir", &a.status.server.certDir,
                  "without certificate files: keep a generated pair here (default: in memory)");
  flags.addString("status-tls-cert-file", &a.status.server.tlsCertFile,
                  "serving certificate of the status listener");
  flags.addString("status-tls-private-key-file", &a.status.server.tlsPrivateKeyFile,
                  "its private key");
  a.status.delegation.addReviewFlags(flags);
  flags.section("GPU mapping flags");
  addGpuMappingFlags(flags, &a.gpuMapping, &a.dcgm);
  flags.section("Prometheus flags", "The Prometheus that --gpu-mapping=dcgm asks.");
  a.prometheus.addFlags(flags);
  return flags;
}

// Parses and completes the flags; nullopt when the command should run, else its exit code.
std::optional<int> parseArgs(const std::vector<std::string>& all, RunArgs& a, std::ostream& out,
                             std::ostream& err) {
  core::FlagSet flags = runFlagSet(a);
  if (auto exitCode = flags.parseCommand(all, out, err)) return exitCode;
  if (a.lease.renewDeadline >= a.lease.leaseDuration) {
    err << "gpuscale-reconciler run: --renew-deadline must be below --lease-duration\n";
    return kBadUsage;
  }
  if (a.status.server.tlsCertFile.empty() != a.status.server.tlsPrivateKeyFile.empty()) {
    err << "gpuscale-reconciler run: --status-tls-cert-file and --status-tls-private-key-file go "
           "together\n";
    return kBadUsage;
  }
  if (a.gpuMapping == "dcgm" && !flags.changed("prometheus-url")) {
    err << "gpuscale-reconciler run: --gpu-mapping=dcgm needs --prometheus-url\n";
    return kBadUsage;
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
  a.controller.operatorNamespace = a.actuator.operatorNamespace;
  a.controller.dryRun = a.dryRun;
  a.controller.observe = a.mode == RunMode::kObserve;
  if (a.lease.identity.empty()) a.lease.identity = defaultIdentity();
  if (!flags.changed("state-namespace")) {
    // The reconciler's own namespace: the pod's (downward API), else the Lease's.
    const char* pod = std::getenv("POD_NAMESPACE");
    a.controller.state.ns = pod != nullptr && *pod != '\0' ? pod : a.lease.ns;
  }
  return std::nullopt;
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
  RunArgs args;
  return runFlagSet(args).usage();
}

std::string runFlagReference() { return core::markdownOf(runFlagSet); }

namespace {

// glibc gives a thread that meets contention an arena of its own (up to 8 per core), and each arena
// keeps the memory freed in it: with the informers' threads reading objects and the pass's thread
// building snapshots, most of the resident set was freed memory spread over 16 arenas. Two arenas
// held the fleet benchmark's resident set at 138 MiB instead of 186 MiB (docs/benchmarks/fleet.md).
// MALLOC_ARENA_MAX in the environment still decides when set. Before any thread starts.
void limitMallocArenas() {
#if defined(__GLIBC__)
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
#endif
}

}  // namespace

int runRunCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunArgs a;
  if (auto exitCode = parseArgs(args, a, out, err)) return *exitCode;
  limitMallocArenas();
  const core::StopSignals stopSignals;  // before any client starts a thread
  auto policies = PolicySource::open(a.config);
  if (!policies) {
    err << "gpuscale-reconciler run: " << policies.status().message() << "\n";
    return kBadUsage;
  }
  if (a.config.empty()) {
    spdlog::warn(
        "no --policy: no partition policy is configured, so no HPA is managed and no node is "
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
  config->observer = std::make_shared<ThrottleNotingObserver>(registry);
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
  std::shared_ptr<kube::KubeClient> writer = std::make_shared<RetryNotingClient>(kc, retried);
  const bool observe = a.mode == RunMode::kObserve;
  metrics->observeMode(observe);
  // Observe mode: whatever the controller or the actuator would write is withheld and counted.
  if (observe) writer = std::make_shared<ObservingKubeClient>(writer, metrics);
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
  std::shared_ptr<Actuator> actuator;
  if (observe) {
    actuator = std::make_shared<ObservingActuator>(events, metrics);
  } else {
    actuator = std::make_shared<KubeActuator>(writer, events, actuatorGpuPods, a.actuator, metrics);
  }
  // The first LIST of every object and each pass's snapshot free far more than the caches keep;
  // glibc keeps freed memory in its arenas, so the reclaimer hands it back (every minute).
  core::HeapReclaimer::instance();
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
      "gpuscale-reconciler running (identity {}, mode {}, dry run {}, probes on port {}, status on "
      "HTTPS port {})",
      a.lease.identity, runModeName(a.mode), a.dryRun, (*health)->port(),
      status ? status->port() : 0);
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
