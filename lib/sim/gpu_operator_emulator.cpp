#include "gpuscale/sim/gpu_operator_emulator.h"

#include <condition_variable>
#include <iterator>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <spdlog/spdlog.h>

#include "gpuscale/core/metric_families.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/kube/informer.h"
#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/sim/cluster_view.h"
#include "gpuscale/sim/dra_driver.h"
#include "gpuscale/sim/gpu_allocation.h"
#include "gpuscale/sim/mig_manager_model.h"
#include "gpuscale/sim/node_advertisement.h"
#include "gpuscale/sim/node_objects.h"
#include "gpuscale/sim/operator_config.h"
#include "gpuscale/sim/pod_devices.h"

namespace gpuscale::sim {
namespace {

using Clock = std::chrono::steady_clock;
using partition::DevicePluginConfig;
using partition::MigGpuSetting;

constexpr std::array kDeployLabels = {"nvidia.com/gpu.deploy.device-plugin",
                                      "nvidia.com/gpu.deploy.gpu-feature-discovery",
                                      "nvidia.com/gpu.deploy.dcgm-exporter"};

const kube::ResourceRef kNodes{"", "v1", "nodes", "", "", ""};
const kube::ResourceRef kPods{"", "v1", "pods", "", "", ""};

kube::ResourceRef configMaps(const std::string& ns) { return {"", "v1", "configmaps", ns, "", ""}; }

// The device plugin of one node with its config-manager sidecar.
struct DevicePlugin {
  std::string requested;  // the config name the label (or default) selects
  std::string active;     // the config in use ("" = none)
  std::optional<DevicePluginConfig> config;
  std::optional<Clock::time_point> reloadAt;
  bool reportedMissing = false;

  const DevicePluginConfig* current() const { return config ? &*config : nullptr; }
};

struct NodeState {
  GpuNodeSpec spec;
  MigManagerModel migManager;
  DevicePlugin plugin;
  GpuAllocation allocation;
  bool wasPaused = false;
};

}  // namespace

class GpuOperatorEmulator::Impl {
 public:
  Impl(std::shared_ptr<kube::KubeClient> client, Scenario scenario, EmulatorOptions options,
       std::shared_ptr<prometheus::Registry> registry)
      : client_(std::move(client)),
        scenario_(std::move(scenario)),
        options_(std::move(options)),
        registry_(std::move(registry)),
        reconfigurations_(core::counterFamily(*registry_, "gpuscale_sim_mig_reconfigurations_total",
                                              "mig-manager runs that ended, by node and result")),
        transitions_(core::counterFamily(
            *registry_, "gpuscale_sim_transitions_total",
            "Logged transitions (mig-manager, device plugin), by node and kind")),
        apiErrors_(core::counterFamily(*registry_, "gpuscale_sim_api_errors_total",
                                       "Failed Kubernetes API writes, by verb")),
        allocatable_(
            core::gaugeFamily(*registry_, "gpuscale_sim_node_allocatable",
                              "GPU allocatable the emulator last wrote, by node and resource")),
        migState_(core::gaugeFamily(*registry_, "gpuscale_sim_mig_config_state",
                                    "1 for the node's current nvidia.com/mig.config.state")),
        passes_(core::counter(*registry_, "gpuscale_sim_reconcile_passes_total",
                              "Reconcile passes over all nodes")) {
    for (const auto& spec : scenario_.nodes) {
      if (spec.dra && !dra_) dra_ = std::make_unique<DraDriver>(client_, *registry_);
    }
  }

  core::Status init() {
    defaultMig_ = defaultMigPartedConfig();
    // The starting geometry is what the hardware has, whichever ConfigMap named it: looked up in
    // the custom config, then the default (mig-manager itself reads only one, see resolverFor).
    std::vector<partition::MigPartedConfig> known;
    if (scenario_.gpuOperator.customMigConfig)
      known.push_back(*scenario_.gpuOperator.customMigConfig);
    known.push_back(defaultMig_);
    for (const auto& spec : scenario_.nodes) {
      std::vector<MigGpuSetting> gpus(spec.gpus);
      if (!spec.migConfig.empty()) {
        auto resolved = resolveNodeMigConfig(known, spec, spec.migConfig, gpus);
        if (!resolved) {
          return core::Status::invalid(fmt::format(
              "node {}: migConfig \"{}\" is in no mig-parted config", spec.name, spec.migConfig));
        }
        gpus = std::move(*resolved);
      }
      NodeState state{
          spec,
          MigManagerModel(spec,
                          spec.reconfigureDelay.value_or(scenario_.gpuOperator.reconfigureDelay),
                          spec.migConfig, gpus, scenario_.gpuOperator.modeChange),
          {},
          {},
          false};
      const std::string& dp = spec.devicePluginConfig.empty()
                                  ? scenario_.gpuOperator.devicePluginDefault
                                  : spec.devicePluginConfig;
      state.plugin.requested = state.plugin.active = dp;
      if (!dp.empty()) {
        state.plugin.config =
            *partition::parseDevicePluginConfig(scenario_.gpuOperator.devicePluginConfigs.at(dp));
      }
      auto adv = advertise(spec, gpus, state.plugin.current(), false);
      if (!adv.error.empty()) {
        return core::Status::invalid(
            fmt::format("node {}: device plugin cannot start: {}", spec.name, adv.error));
      }
      nodes_.emplace(spec.name, std::move(state));
    }
    return {};
  }

  core::Status start() {
    if (auto s = createConfigMaps(); !s.ok()) return s;
    if (dra_) {
      if (auto s = dra_->start(); !s.ok()) return s;
    }
    if (options_.background) {
      view_ = makeInformerView(
          client_, scenario_.gpuOperator.namespaceName, [this] { wake(); },
          scenario_.gpuOperator.configMapSync);
      if (!view_->waitForSync(std::chrono::seconds(30))) {
        return core::Status::unavailable("informers did not sync within 30s");
      }
    } else {
      view_ = makeDirectView(client_, scenario_.gpuOperator.namespaceName);
    }
    for (auto& [name, node] : nodes_) {
      if (auto s = ensureNode(node); !s.ok()) return s;
    }
    healthy_ = true;
    if (options_.background) {
      worker_ = std::jthread([this](std::stop_token stop) { loop(stop); });
    }
    return {};
  }

  void stop() {
    worker_.request_stop();
    wake();
    if (worker_.joinable()) worker_.join();
    {
      std::lock_guard lock(passMu_);
      view_.reset();
    }
    healthy_ = false;
  }

  void reconcile(Clock::time_point now) {
    std::lock_guard lock(passMu_);
    passes_.Increment();
    for (auto& [name, node] : nodes_) reconcileNode(node, now);
  }

  bool healthy() const { return healthy_.load(); }

  std::vector<NodeGpuView> nodeGpus() {
    std::lock_guard lock(passMu_);
    if (!view_) return {};
    const auto pods = view_->pods();
    std::vector<NodeGpuView> out;
    for (auto& [name, node] : nodes_) {
      std::vector<NodePod> onNode;
      for (const auto& pod : pods) {
        const auto& meta = pod->value("metadata", kube::Object::object());
        if (meta.contains("deletionTimestamp")) continue;
        if (pod->value("status", kube::Object::object()).value("phase", "") != "Running") continue;
        auto claim = podGpuClaim(*pod, name);
        std::set<int> gpus;
        if (claim) {
          gpus = node.allocation.gpusOf(claim->uid);
        } else if (node.spec.dra && (claim = draClaim(*pod, name))) {
          gpus = {*claim->pinnedGpu};
        } else {
          continue;
        }
        NodePod p{claim->uid,
                  meta.value("namespace", ""),
                  meta.value("name", ""),
                  meta.value("creationTimestamp", ""),
                  {},
                  claim->requests,
                  std::move(gpus),
                  claim->container};
        const kube::Object labels = meta.value("labels", kube::Object::object());
        for (const auto& [k, v] : labels.items()) {
          if (v.is_string()) p.labels.emplace(k, v.get<std::string>());
        }
        onNode.push_back(std::move(p));
      }
      out.push_back(
          {node.spec, node.migManager.gpus(), node.plugin.config, node.migManager.paused(),
           assignDevices(node.spec, node.migManager.gpus(), node.plugin.current(), onNode)});
    }
    return out;
  }

 private:
  // A pod of ResourceClaims on DRA node `node`, as the load model sees it: the devices the emulated
  // kubelet plugin prepared for it, in the device plugin's units, on their GPU (pinnedGpu).
  std::optional<PodGpuClaim> draClaim(const kube::Object& pod, const std::string& node) const {
    const auto& meta = pod.value("metadata", kube::Object::object());
    PodGpuClaim claim;
    claim.uid = meta.value("uid", "");
    for (const auto& d : dra_->heldDevices(node, claim.uid)) {
      ++claim.requests[d.resource];
      claim.pinnedGpu = d.gpu;
    }
    if (claim.requests.empty()) return std::nullopt;
    for (const auto& c :
         pod.value("spec", kube::Object::object()).value("containers", kube::Object::array())) {
      if (!c.value("resources", kube::Object::object())
               .value("claims", kube::Object::array())
               .empty()) {
        claim.container = c.value("name", "");
        break;
      }
    }
    return claim;
  }

  void wake() {
    {
      std::lock_guard lock(wakeMu_);
      dirty_ = true;
    }
    wakeCv_.notify_all();
  }

  void loop(std::stop_token stop) {
    while (!stop.stop_requested()) {
      auto now = Clock::now();
      reconcile(now);
      auto until = now + options_.resyncPeriod;
      {
        std::lock_guard lock(passMu_);
        for (const auto& [name, node] : nodes_) {
          if (auto d = node.migManager.deadline(); d && *d < until) until = *d;
          if (node.plugin.reloadAt && *node.plugin.reloadAt < until) until = *node.plugin.reloadAt;
        }
      }
      std::unique_lock lock(wakeMu_);
      wakeCv_.wait_until(lock, stop, until, [this] { return dirty_; });
      dirty_ = false;
    }
  }

  void note(const NodeState& node, std::string_view kind, const std::string& message) {
    if (message.empty()) return;
    spdlog::info("node {}: {}: {}", node.spec.name, kind, message);
    transitions_.Add({{"node", node.spec.name}, {"kind", std::string(kind)}}).Increment();
  }

  void apiError(std::string_view verb, const std::string& what, const core::Status& status) {
    spdlog::warn("{} {}: {}", verb, what, status.toString());
    apiErrors_.Add({{"verb", std::string(verb)}}).Increment();
  }

  core::Status createConfigMaps() {
    const auto& op = scenario_.gpuOperator;
    std::vector<kube::Object> maps;
    maps.push_back(configMapObject(
        op.namespaceName, op.defaultMigConfigMap,
        {{std::string(kMigConfigKey), partition::emitMigPartedConfig(defaultMig_)}}));
    if (op.customMigConfig) {
      maps.push_back(configMapObject(
          op.namespaceName, op.customMigConfigMap,
          {{std::string(kMigConfigKey), partition::emitMigPartedConfig(*op.customMigConfig)}}));
    }
    if (op.customMigConfigMap.empty()) {
      // mig-manager >= v0.15 publishes what it generated for its node.
      for (const auto& spec : scenario_.nodes) {
        if (!spec.migCapable) continue;
        auto generated =
            generatedMigPartedConfig(partition::matchModel(spec.product, spec.memoryMiB));
        if (generated.configs.empty()) continue;
        maps.push_back(configMapObject(
            op.namespaceName, spec.name + "-mig-config",
            {{std::string(kMigConfigKey), partition::emitMigPartedConfig(generated)}}));
      }
    }
    maps.push_back(
        configMapObject(op.namespaceName, op.devicePluginConfigMap, op.devicePluginConfigs));
    auto ns = client_->create(
        kube::ResourceRef{"", "v1", "namespaces", "", "", ""},
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", op.namespaceName}}}});
    if (!ns.ok() && !k8s::isConflict(ns.status()))
      return ns.status().withContext("create namespace");
    for (const auto& cm : maps) {
      auto r = client_->create(configMaps(op.namespaceName), cm);
      const std::string name = cm["metadata"]["name"];
      if (r.ok()) {
        spdlog::info("created ConfigMap {}/{}", op.namespaceName, name);
      } else if (k8s::isConflict(r.status())) {
        spdlog::info("ConfigMap {}/{} exists; kept as is", op.namespaceName, name);
      } else {
        return r.status().withContext("create ConfigMap " + name);
      }
    }
    return {};
  }

  Labels operatorLabels(const NodeState& node) const {
    Labels out;
    const bool paused = node.migManager.paused();
    for (const char* key : kDeployLabels) out[key] = paused ? "paused-for-mig-change" : "true";
    if (node.spec.migCapable && node.spec.migManagerPresent) {
      out[std::string(k8s::kMigConfigStateLabel)] =
          std::string(migConfigStateName(node.migManager.state()));
      out["nvidia.com/gpu.deploy.mig-manager"] = "true";
    } else if (node.spec.migCapable && node.spec.emptyMigState) {
      out[std::string(k8s::kMigConfigStateLabel)] = "";
    }
    return out;
  }

  core::Status ensureNode(NodeState& node) {
    if (view_->node(node.spec.name)) {
      spdlog::info("node {}: exists; adopted", node.spec.name);
      return {};
    }
    auto adv = advertise(node.spec, node.migManager.gpus(), node.plugin.current(), false);
    Labels labels = adv.labels;
    for (const auto& [k, v] : operatorLabels(node)) labels[k] = v;
    if (!node.spec.migConfig.empty())
      labels[std::string(k8s::kMigConfigLabel)] = node.spec.migConfig;
    if (!node.spec.devicePluginConfig.empty()) {
      labels[std::string(k8s::kDevicePluginConfigLabel)] = node.spec.devicePluginConfig;
    }
    const kube::Object object = newNodeObject(node.spec, labels, adv, options_.kwokAnnotationKey,
                                              options_.kwokAnnotationValue);
    auto created = client_->create(kNodes, object);
    if (!created.ok()) {
      // The informer may not have seen a node created a moment ago.
      if (k8s::isConflict(created.status())) return {};
      return created.status().withContext("create node " + node.spec.name);
    }
    spdlog::info("node {}: created ({} GPU {}, strategy {}, mig.config \"{}\", allocatable {})",
                 node.spec.name, node.spec.gpus, node.spec.product,
                 partition::migStrategyName(node.spec.migStrategy), node.spec.migConfig,
                 object["status"]["allocatable"].dump());
    updateGauges(node, adv);
    return {};
  }

  MigConfigResolver resolverFor(const NodeState& node) {
    return [this, &node](const std::string& name, const std::vector<MigGpuSetting>& current) {
      // mig-manager reads one file: the first of these ConfigMaps that exists, and only it.
      std::vector<partition::MigPartedConfig> configs;
      for (const auto& cmName : migConfigMapsFor(scenario_.gpuOperator, node.spec.name)) {
        auto cm = view_->configMap(cmName);
        if (!cm) continue;
        const auto& data = cm->value("data", kube::Object::object());
        auto it = data.find(kMigConfigKey);
        if (it != data.end() && it->is_string()) {
          auto parsed = partition::parseMigPartedConfig(it->get<std::string>());
          if (parsed) {
            configs.push_back(std::move(*parsed));
          } else {
            spdlog::warn("ConfigMap {}: {}", cmName, parsed.status().message());
          }
        }
        break;
      }
      return resolveNodeMigConfig(configs, node.spec, name, current);
    };
  }

  // The config-manager sidecar: follows the label; the plugin reloads after the configured delay.
  void updatePlugin(NodeState& node, const kube::Object& object, Clock::time_point now) {
    DevicePlugin& p = node.plugin;
    std::string wanted = k8s::labelOf(object, k8s::kDevicePluginConfigLabel);
    if (wanted.empty()) wanted = scenario_.gpuOperator.devicePluginDefault;
    const bool restarted = node.wasPaused && !node.migManager.paused();
    if (wanted != p.requested || restarted) {
      p.requested = wanted;
      p.reloadAt = restarted ? now : now + scenario_.gpuOperator.devicePluginReload;
      p.reportedMissing = false;
    }
    if (!p.reloadAt || now < *p.reloadAt) return;
    if (p.requested.empty()) {
      p.config.reset();
    } else {
      auto cm = view_->configMap(scenario_.gpuOperator.devicePluginConfigMap);
      const kube::Object data =
          cm ? cm->value("data", kube::Object::object()) : kube::Object::object();
      auto it = data.find(p.requested);
      if (it == data.end() || !it->is_string()) {
        if (!p.reportedMissing) {
          note(node, "device-plugin",
               fmt::format("specified config {} does not exist; keeping \"{}\"", p.requested,
                           p.active));
          p.reportedMissing = true;
        }
        return;  // retried on the next pass, as the sidecar restarts
      }
      auto parsed = partition::parseDevicePluginConfig(it->get<std::string>());
      if (!parsed) {
        if (!p.reportedMissing) {
          note(node, "device-plugin",
               fmt::format("config {} is invalid ({}); keeping \"{}\"", p.requested,
                           parsed.status().message(), p.active));
          p.reportedMissing = true;
        }
        return;
      }
      p.config = std::move(*parsed);
    }
    if (p.active != p.requested || restarted) {
      note(node, "device-plugin", fmt::format("config \"{}\" -> \"{}\"", p.active, p.requested));
    }
    p.active = p.requested;
    p.reloadAt.reset();
  }

  void placePods(NodeState& node) {
    std::vector<PodGpuClaim> claims;
    for (const auto& pod : view_->pods()) {
      if (auto c = podGpuClaim(*pod, node.spec.name)) claims.push_back(std::move(*c));
    }
    std::vector<ResourceCounts> units;
    for (const auto& gpu : node.migManager.gpus()) {
      units.push_back(unitsOfGpu(node.spec, gpu, node.plugin.current()));
    }
    node.allocation.update(claims, units);
  }

  void reconcileNode(NodeState& node, Clock::time_point now) {
    auto object = view_->node(node.spec.name);
    if (!object) {
      if (auto s = ensureNode(node); !s.ok()) apiError("create", "node " + node.spec.name, s);
      return;
    }
    auto resolve = resolverFor(node);
    // Without a mig-manager nothing reads nvidia.com/mig.config on the node.
    if (node.spec.migCapable && node.spec.migManagerPresent) {
      const uint64_t failedBefore = node.migManager.failures(),
                     okBefore = node.migManager.successes();
      note(node, "mig-manager",
           node.migManager.observeLabel(k8s::labelOf(*object, k8s::kMigConfigLabel), resolve, now));
      placePods(node);
      note(node, "mig-manager", node.migManager.tick(now, node.allocation.busyGpus(), resolve));
      if (node.migManager.failures() > failedBefore) {
        reconfigurations_.Add({{"node", node.spec.name}, {"result", "failed"}})
            .Increment(node.migManager.failures() - failedBefore);
      }
      if (node.migManager.successes() > okBefore) {
        reconfigurations_.Add({{"node", node.spec.name}, {"result", "success"}})
            .Increment(node.migManager.successes() - okBefore);
      }
    }
    updatePlugin(node, *object, now);
    node.wasPaused = node.migManager.paused();
    placePods(node);
    auto adv = advertise(node.spec, node.migManager.gpus(), node.plugin.current(),
                         node.migManager.paused());
    if (!adv.error.empty()) note(node, "device-plugin", "cannot serve the config: " + adv.error);
    if (node.migManager.paused()) {
      writeLabels(node, *object, adv);
      writeStatus(node, *object, adv);
    } else {
      writeStatus(node, *object, adv);
      writeLabels(node, *object, adv);
    }
    updateGauges(node, adv);
    if (node.spec.dra)
      dra_->reconcileNode(node.spec, node.migManager.gpus(), *object, view_->pods());
  }

  void writeLabels(const NodeState& node, const kube::Object& object,
                   const NodeAdvertisement& adv) {
    Labels desired = adv.labels;
    for (auto& [k, v] : operatorLabels(node)) desired[k] = v;
    const kube::Object patch = labelPatch(object, desired);
    if (patch.empty()) return;
    auto r = client_->patch(kNodes.named(node.spec.name), kube::PatchType::kMerge,
                            {{"metadata", {{"labels", patch}}}});
    if (!r.ok()) apiError("patch", "labels of node " + node.spec.name, r.status());
  }

  void writeStatus(const NodeState& node, const kube::Object& object,
                   const NodeAdvertisement& adv) {
    const kube::Object patch = statusPatch(object, adv);
    if (patch.empty()) return;
    auto ref = kNodes.named(node.spec.name);
    ref.subresource = "status";
    auto r = client_->patch(ref, kube::PatchType::kMerge, {{"status", patch}});
    if (!r.ok()) {
      apiError("patch", "status of node " + node.spec.name, r.status());
      return;
    }
    spdlog::info("node {}: allocatable {}", node.spec.name, resourcesJson(adv.allocatable).dump());
  }

  void updateGauges(const NodeState& node, const NodeAdvertisement& adv) {
    for (const auto& [name, n] : adv.capacity) {
      auto it = adv.allocatable.find(name);
      allocatable_.Add({{"node", node.spec.name}, {"resource", name}})
          .Set(it == adv.allocatable.end() ? 0 : it->second);
    }
    for (auto state : {MigConfigState::kSuccess, MigConfigState::kPending,
                       MigConfigState::kRebooting, MigConfigState::kFailed}) {
      migState_.Add({{"node", node.spec.name}, {"state", std::string(migConfigStateName(state))}})
          .Set(node.spec.migCapable && node.spec.migManagerPresent &&
                       node.migManager.state() == state
                   ? 1
                   : 0);
    }
  }

  std::shared_ptr<kube::KubeClient> client_;
  Scenario scenario_;
  EmulatorOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& reconfigurations_;
  prometheus::Family<prometheus::Counter>& transitions_;
  prometheus::Family<prometheus::Counter>& apiErrors_;
  prometheus::Family<prometheus::Gauge>& allocatable_;
  prometheus::Family<prometheus::Gauge>& migState_;
  prometheus::Counter& passes_;

  partition::MigPartedConfig defaultMig_;
  std::map<std::string, NodeState> nodes_;
  std::unique_ptr<ClusterView> view_;
  std::unique_ptr<DraDriver> dra_;  // when some node's GPUs are published through DRA
  std::mutex passMu_;
  std::mutex wakeMu_;
  std::condition_variable_any wakeCv_;
  bool dirty_ = false;
  std::atomic<bool> healthy_{false};
  std::jthread worker_;
};

core::Result<std::unique_ptr<GpuOperatorEmulator>> GpuOperatorEmulator::create(
    std::shared_ptr<kube::KubeClient> client, Scenario scenario, EmulatorOptions options,
    std::shared_ptr<prometheus::Registry> registry) {
  std::unique_ptr<GpuOperatorEmulator> e(new GpuOperatorEmulator(
      std::move(client), std::move(scenario), std::move(options), std::move(registry)));
  if (auto s = e->impl_->init(); !s.ok()) return s;
  return e;
}

GpuOperatorEmulator::GpuOperatorEmulator(std::shared_ptr<kube::KubeClient> client,
                                         Scenario scenario, EmulatorOptions options,
                                         std::shared_ptr<prometheus::Registry> registry)
    : impl_(std::make_unique<Impl>(std::move(client), std::move(scenario), std::move(options),
                                   std::move(registry))) {}

GpuOperatorEmulator::~GpuOperatorEmulator() { impl_->stop(); }

core::Status GpuOperatorEmulator::start() { return impl_->start(); }
void GpuOperatorEmulator::stop() { impl_->stop(); }
void GpuOperatorEmulator::reconcile(std::chrono::steady_clock::time_point now) {
  impl_->reconcile(now);
}
bool GpuOperatorEmulator::healthy() const { return impl_->healthy(); }
std::vector<PodDevice> GpuOperatorEmulator::podDevices() const {
  std::vector<PodDevice> out;
  for (auto& node : impl_->nodeGpus()) {
    std::move(node.pods.begin(), node.pods.end(), std::back_inserter(out));
  }
  return out;
}
std::vector<NodeGpuView> GpuOperatorEmulator::nodeGpus() const { return impl_->nodeGpus(); }

}  // namespace gpuscale::sim
