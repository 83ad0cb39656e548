#include "gpuscale/partition/snapshot.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "capacity_request_snapshot.h"
#include "config_sources.h"
#include "dra_snapshot.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/mig_restore.h"
#include "gpuscale/partition/object_fields.h"
#include "gpuscale/partition/object_record.h"
#include "gpuscale/partition/pod_record.h"
#include "gpuscale/partition/resource_names.h"
#include "quantity.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

// Counts in GFD labels beyond this (GPUs, instances, replicas, MiB of memory) are not a GPU
// node's: such a label reads as absent, so no loop over a label's count can run away.
constexpr std::int64_t kMaxLabelCount = 1 << 20;
constexpr std::int64_t kMaxGpusPerNode = 256;

std::optional<std::int64_t> labelInt(const Labels& labels, const std::string& key) {
  auto it = labels.find(key);
  if (it == labels.end()) return std::nullopt;
  auto q = parseQuantity(it->second);
  if (!q || *q < 0 || *q > static_cast<double>(kMaxLabelCount)) return std::nullopt;
  return static_cast<std::int64_t>(*q);
}

// nvidia.com/gpu.count, when it is a GPU node's.
std::optional<std::int64_t> gpuCount(const Labels& labels) {
  auto count = labelInt(labels, "nvidia.com/gpu.count");
  if (count && *count > kMaxGpusPerNode) return std::nullopt;
  return count;
}

std::string label(const Labels& labels, std::string_view key) {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? std::string() : it->second;
}

// Every GPU's setting under config `name`, from the first ConfigMap that resolves it for all of
// them; `physical` is the GPU count (nullopt: derive it from the single strategy's device count).
std::optional<std::vector<GpuState>> resolveNamed(const NodeState& node, const std::string& name,
                                                  std::optional<int> physical,
                                                  ConfigSources& sources) {
  auto count = gpuCount(node.labels);
  for (const MigPartedConfig* config : sources.migConfigsFor(node.name)) {
    auto first = resolveMigConfig(*config, name, node.model, 0);
    if (!first) continue;
    int n = physical.value_or(static_cast<int>(count.value_or(1)));
    if (!physical && node.migStrategy == MigStrategy::kSingle && first->migEnabled &&
        instanceCount(first->geometry) > 0) {
      n = std::max<int>(1, n / instanceCount(first->geometry));
    }
    std::vector<GpuState> gpus;
    for (int i = 0; i < n; ++i) {
      auto s = resolveMigConfig(*config, name, node.model, i);
      if (!s) break;
      gpus.push_back({i, *s, false});
    }
    if (static_cast<int>(gpus.size()) == n) return gpus;
  }
  return std::nullopt;
}

// The live mig-restore record's `before` config, per GPU.
void resolveRestore(NodeState& node, const std::string& annotation, ConfigSources& sources) {
  auto restore = decodeMigRestore(annotation);
  // Only a config gpuscale wrote for this node is given back: a hand-written record cannot make
  // the planner rebuild a node an operator configured.
  if (!restore || !node.geometryKnown || restore->applied != node.migConfig ||
      !isOwnedConfigOf(restore->applied, node.name)) {
    return;
  }
  auto gpus = resolveNamed(node, restore->before, static_cast<int>(node.gpus.size()), sources);
  if (!gpus) return;
  node.restoreGpus.emplace();
  for (const auto& g : *gpus) node.restoreGpus->push_back(g.setting);
}

void resolveGeometry(NodeState& node, ConfigSources& sources) {
  if (node.model == nullptr) return;
  auto count = gpuCount(node.labels);
  if (!node.migConfig.empty()) {
    if (auto gpus = resolveNamed(node, node.migConfig, std::nullopt, sources)) {
      node.gpus = std::move(*gpus);
      node.geometryKnown = true;
      return;
    }
  }
  if (node.migStrategy != MigStrategy::kMixed || !count || *count <= 0) return;
  MigGeometry perGpu;
  for (const auto& p : node.model->profiles) {
    auto n = labelInt(node.labels, migResourceName(p.name) + ".count");
    if (!n || *n == 0) continue;
    if (*n % *count != 0) return;
    perGpu[p.name] = static_cast<int>(*n / *count);
  }
  if (perGpu.empty() || !isValidGeometry(*node.model, perGpu)) return;
  for (int i = 0; i < *count; ++i) node.gpus.push_back({i, {true, perGpu}, false});
  node.geometryKnown = true;
}

// The plugin config, when the node selects one, is the whole truth; otherwise GFD's
// `<resource>.replicas`.
void collectSharedReplicas(NodeState& n) {
  if (n.devicePluginConfig) {
    if (n.devicePluginConfig->mps) n.sharingMode = SharingMode::kMps;
    const SharingConfig* s = sharingOf(*n.devicePluginConfig, n.sharingMode);
    if (s == nullptr) return;
    for (const auto& r : s->resources) {
      if (r.replicas > 1) n.sharedReplicas[r.name] = r.replicas;
    }
    return;
  }
  if (label(n.labels, "nvidia.com/gpu.sharing-strategy") == "mps")
    n.sharingMode = SharingMode::kMps;
  const std::string suffix = ".replicas";
  for (const auto& [key, value] : n.labels) {
    if (key.rfind(kNvidiaPrefix, 0) != 0 || key.size() <= suffix.size() ||
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    auto replicas = labelInt(n.labels, key);
    if (replicas && *replicas > 1) {
      n.sharedReplicas[key.substr(0, key.size() - suffix.size())] = static_cast<int>(*replicas);
    }
  }
}

// The allocatable a node intent (written by the reconciler) waits for: its follow-up's `expect`
// when it has one (that step comes last), else its own. Malformed text gives nothing.
ResourceCounts expectedAllocatable(const std::string& intent) {
  ResourceCounts out;
  const json j = json::parse(intent, nullptr, false);
  if (!j.is_object()) return out;
  auto counts = fields::readFields("", [&] {
    const json* expect = fields::find(fields::object(j, "then"), "expect");
    if (expect == nullptr) expect = fields::find(j, "expect");
    ResourceCounts read;
    if (expect == nullptr || !expect->is_object()) return read;
    for (const auto& [resource, count] : expect->items()) {
      if (count.is_number_integer()) {
        const std::int64_t n = fields::integer(*expect, resource);
        if (n >= 0) read[resource] = n;
      }
    }
    return read;
  });
  return counts ? *counts : out;
}

// "<result>: <message>" of an outcome annotation (written by the reconciler), "" when it does not
// read.
std::string outcomeSummary(const std::string& outcome) {
  const json j = json::parse(outcome, nullptr, false);
  if (!j.is_object()) return "";
  auto summary = fields::readFields("", [&] {
    const std::string result = fields::string(j, "result");
    const std::string message = fields::string(j, "message");
    return result.empty() ? std::string() : result + (message.empty() ? "" : ": " + message);
  });
  return summary ? *summary : "";
}

NodeState nodeState(const NodeObject& object, ConfigSources& sources) {
  NodeState n;
  n.name = object.meta.name;
  n.labels = object.meta.labels;
  n.schedulable = !object.unschedulable;
  n.allocatable = object.allocatable;
  n.product = label(n.labels, "nvidia.com/gpu.product");
  n.migConfig = label(n.labels, k8s::kMigConfigLabel);
  n.migConfigState = label(n.labels, k8s::kMigConfigStateLabel);
  n.devicePluginConfigName = label(n.labels, k8s::kDevicePluginConfigLabel);
  const Labels& annotations = object.meta.annotations;
  if (auto it = annotations.find(std::string(k8s::kIntentAnnotation)); it != annotations.end()) {
    n.hasIntent = true;
    n.expected = expectedAllocatable(it->second);
  }
  if (auto it = annotations.find(std::string(k8s::kBackoffAnnotation)); it != annotations.end()) {
    n.backoffUntil = core::parseRfc3339(it->second);
  }
  if (auto it = annotations.find(std::string(k8s::kOutcomeAnnotation)); it != annotations.end()) {
    n.lastOutcome = outcomeSummary(it->second);
  }
  n.reshapeTainted = std::any_of(object.taints.begin(), object.taints.end(),
                                 [](const Taint& t) { return t.key == k8s::kReshapeTaint; });
  if (!n.devicePluginConfigName.empty()) {
    if (const auto* c = sources.devicePluginConfig(n.devicePluginConfigName))
      n.devicePluginConfig = *c;
  }
  collectSharedReplicas(n);
  auto strategy = parseMigStrategy(label(n.labels, "nvidia.com/mig.strategy"));
  if (!strategy && n.devicePluginConfig) strategy = n.devicePluginConfig->migStrategy;
  n.migStrategy = strategy.value_or(MigStrategy::kNone);
  auto memory = labelInt(n.labels, "nvidia.com/gpu.memory");
  bool memoryIsWholeGpu = n.migStrategy != MigStrategy::kSingle;
  if (memory && memoryIsWholeGpu) n.gpuMemoryGiB = static_cast<double>(*memory) / 1024.0;
  if (!n.product.empty() && label(n.labels, "nvidia.com/mig.capable") != "false") {
    n.model = matchModel(n.product, memoryIsWholeGpu ? memory : std::nullopt);
  }
  n.inTransition = n.migConfigState == "pending" || n.migConfigState == "rebooting" ||
                   n.migConfigState == "failed";
  for (const auto& [key, value] : n.labels) {
    if (key.rfind("nvidia.com/gpu.deploy.", 0) == 0 && value == "paused-for-mig-change") {
      n.inTransition = true;
    }
  }
  resolveGeometry(n, sources);
  if (auto it = annotations.find(std::string(k8s::kMigRestoreAnnotation)); it != annotations.end())
    resolveRestore(n, it->second, sources);
  if (n.geometryKnown) {
    std::vector<MigGpuSetting> settings;
    for (const auto& g : n.gpus) settings.push_back(g.setting);
    auto exposed = exposedResources(settings, n.migStrategy, nullptr);
    if (exposed) n.devices = ResourceCounts(exposed->begin(), exposed->end());
  } else {
    for (const auto& [name, count] : n.allocatable) {
      n.devices[std::string(unsharedResourceName(name))] = count / std::max(1, n.replicasFor(name));
    }
  }
  return n;
}

// Reads `item` with `read` into `out`; an item that does not read is skipped with its reason.
template <typename Read, typename Out>
void readInto(const KubeItem& item, const std::string& kind, Read&& read, Out&& out,
              std::vector<SkippedObject>& skipped) {
  auto r = read(*item.object);
  if (r) {
    out(std::move(*r));
    return;
  }
  skipped.push_back(skippedObject(kind, *item.object, r.status()));
}

// HPA scale targets of kinds the snapshot has no reader of its own for, as "ns\0kind\0name".
std::set<std::string> scalableTargets(const std::vector<HpaState>& hpas) {
  std::set<std::string> out;
  for (const auto& h : hpas) {
    if (h.targetKind == "Deployment" || h.targetKind == "StatefulSet" ||
        h.targetKind == "ReplicaSet") {
      continue;
    }
    out.insert(h.ns + '\0' + h.targetKind + '\0' + h.targetName);
  }
  return out;
}

// Workloads of any other kind that an HPA scales, each with its Scale (paired by uid).
void readScalables(const std::vector<KubeItem>& others,
                   const std::map<std::string, ScaleObject>& scales, ClusterSnapshot& snap) {
  const std::set<std::string> wanted = scalableTargets(snap.hpas);
  if (wanted.empty()) return;
  for (const KubeItem& item : others) {
    const ObjectMeta id = identityOf(*item.object);
    const std::string kind = item.kind.empty() ? kindOf(*item.object) : std::string(item.kind);
    const std::string ns = id.ns.empty() ? "default" : id.ns;
    if (!wanted.contains(ns + '\0' + kind + '\0' + id.name)) continue;
    auto scale = scales.find(id.uid);
    const ScaleObject* s = id.uid.empty() || scale == scales.end() ? nullptr : &scale->second;
    readInto(
        item, kind, [&](const json& o) { return readScalableWorkload(o, kind, s); },
        [&](ScaleTarget t) { snap.targets.push_back(std::move(t)); }, snap.skipped);
  }
}

// A workload without a pod template takes its GPU requests, nodeSelector and GPU memory need from
// its first pod (namespace/name order) whose spec reads as a template.
void templatesFromPods(const std::vector<std::shared_ptr<const PodRecord>>& records,
                       ClusterSnapshot& snap) {
  for (auto& t : snap.targets) {
    if (!t.templateFromPods) continue;
    for (std::size_t i = 0; i < snap.pods.size(); ++i) {
      if (!snap.pods[i].active() || !t.selects(snap.pods[i])) continue;
      if (const auto& tpl = records[i]->asTemplate) {
        t.gpuRequests = tpl->gpuRequests;
        t.nodeSelector = tpl->nodeSelector;
        t.gpuMemory = snap.pods[i].gpuMemory;
        break;
      }
    }
  }
}

// The ScaledObject that owns each KEDA-made HPA holds its ceiling: the HPA's controller owner
// reference names it (uid included when given) and its status.hpaName names the HPA.
void resolveCeilingHolders(const std::vector<ScaledObjectObject>& scaledObjects,
                           ClusterSnapshot& snap) {
  for (auto& h : snap.hpas) {
    if (!h.ownedByScaledObject()) continue;
    for (const auto& so : scaledObjects) {
      const std::string ns = so.meta.ns.empty() ? "default" : so.meta.ns;
      if (ns != h.ns || so.meta.name != h.controller->name ||
          (!h.controller->uid.empty() && so.meta.uid != h.controller->uid) ||
          (!so.hpaName.empty() && so.hpaName != h.name)) {
        continue;
      }
      h.ceilingHolder = CeilingHolder{"ScaledObject",
                                      "keda.sh/v1alpha1",
                                      so.meta.name,
                                      so.meta.uid,
                                      "spec.maxReplicaCount",
                                      so.maxReplicaCount,
                                      so.meta.annotation(k8s::kStatusAnnotation)};
    }
  }
}

ClusterSnapshot build(const std::vector<KubeItem>& items) {
  ClusterSnapshot snap;
  std::vector<ConfigMapState> configMaps;
  std::vector<std::shared_ptr<const NodeObject>> nodes;
  detail::DraObjects dra;
  std::vector<ScaledObjectObject> scaledObjects;
  std::vector<CapacityRequest> requests;
  std::map<std::string, ScaleObject> scales;  // by the workload's uid
  std::vector<KubeItem> others;               // maybe workloads an HPA scales through /scale
  std::vector<std::shared_ptr<const PodRecord>> pods;  // read already, or here from JSON
  auto& skipped = snap.skipped;
  auto into = [](auto& list) { return [&list](auto o) { list.push_back(std::move(o)); }; };
  for (const KubeItem& item : items) {
    const std::string kind = item.pod != nullptr ? "Pod"
                             : item.kind.empty() ? kindOf(*item.object)
                                                 : std::string(item.kind);
    if (readsAsRecord(kind)) {
      auto record =
          item.record != nullptr
              ? item.record
              : std::make_shared<const ObjectRecord>(readObjectRecord(kind, *item.object));
      if (record->skipped) {
        skipped.push_back(*record->skipped);
      } else if (const auto* node = std::get_if<NodeObject>(&record->value)) {
        nodes.push_back(std::shared_ptr<const NodeObject>(record, node));  // shared, not copied
      } else if (const auto* hpa = std::get_if<HpaState>(&record->value)) {
        snap.hpas.push_back(*hpa);  // the pass completes it (state store, history)
      } else if (const auto* target = std::get_if<ScaleTarget>(&record->value)) {
        snap.targets.push_back(*target);  // completed from pods and DRA claims
      }
    } else if (kind == "Pod") {
      auto pod = item.pod != nullptr
                     ? item.pod
                     : std::make_shared<const PodRecord>(readPodRecord(*item.object));
      if (pod->pod) {
        pods.push_back(std::move(pod));
      } else if (pod->skipped) {
        skipped.push_back(*pod->skipped);
      }
    } else if (kind == "ScaledObject") {
      readInto(
          item, kind, readScaledObject,
          [&](ScaledObjectObject so) { scaledObjects.push_back(std::move(so)); }, skipped);
    } else if (kind == kCapacityRequestKind) {
      readInto(item, kind, readCapacityRequest, into(requests), skipped);
    } else if (kind == "Scale") {
      readInto(
          item, kind, readScale, [&](ScaleObject sc) { scales[sc.meta.uid] = std::move(sc); },
          skipped);
    } else if (kind == "ConfigMap") {
      readInto(
          item, kind, readConfigMap,
          [&](ConfigMapObject cm) {
            configMaps.push_back(
                {cm.meta.ns.empty() ? "default" : cm.meta.ns, cm.meta.name, std::move(cm.data)});
          },
          skipped);
    } else if (kind == "ResourceSlice") {
      readInto(item, kind, readResourceSlice, into(dra.slices), skipped);
    } else if (kind == "ResourceClaim") {
      readInto(item, kind, readResourceClaim, into(dra.claims), skipped);
    } else if (kind == "ResourceClaimTemplate") {
      readInto(item, kind, readResourceClaimTemplate, into(dra.templates), skipped);
    } else if (kind == "DeviceClass") {
      readInto(item, kind, readDeviceClass, into(dra.classes), skipped);
    } else {
      others.push_back(item);
    }
  }
  ConfigSources sources(std::move(configMaps));
  for (const auto& node : nodes) snap.nodes.push_back(nodeState(*node, sources));
  std::sort(snap.nodes.begin(), snap.nodes.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < snap.nodes.size(); ++i) snap.nodeIndex_[snap.nodes[i].name] = i;
  auto byName = [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  };
  // The reconciler's pod cache gives them in key order, which is this order but for namespaces
  // that prefix others: sorted only when not strictly in order already.
  auto podOrder = [&](const auto& a, const auto& b) { return byName(*a->pod, *b->pod); };
  if (std::adjacent_find(pods.begin(), pods.end(), [&](const auto& a, const auto& b) {
        return !podOrder(a, b);
      }) != pods.end()) {
    std::sort(pods.begin(), pods.end(), podOrder);
  }
  snap.pods.reserve(pods.size());
  // Shared, not copied: each PodState lives in its record (the aliasing shared_ptr keeps the
  // record alive as long as the snapshot).
  for (const auto& pod : pods)
    snap.pods.push_back(std::shared_ptr<const PodState>(pod, &*pod->pod));
  detail::addCapacityRequests(std::move(requests), snap);
  std::sort(snap.hpas.begin(), snap.hpas.end(), byName);
  resolveCeilingHolders(scaledObjects, snap);
  readScalables(others, scales, snap);
  templatesFromPods(pods, snap);
  std::sort(snap.targets.begin(), snap.targets.end(), [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.kind, a.name) < std::tie(b.ns, b.kind, b.name);
  });
  for (const auto& pod : snap.pods) {
    if (pod.nodeName.empty() || !pod.active() || !pod.usesGpu()) continue;
    auto idx = snap.nodeIndex(pod.nodeName);
    if (!idx) continue;
    NodeState& node = snap.nodes[*idx];
    node.hasGpuPods = true;
    for (const auto& [name, n] : pod.gpuRequests) {
      node.used[name] += n;
      const std::string_view base = unsharedResourceName(name);
      auto tenants = node.gpuTenants.find(base);
      if (tenants == node.gpuTenants.end())
        tenants = node.gpuTenants.emplace(std::string(base), std::set<std::string>{}).first;
      tenants->second.insert(pod.ns);
    }
  }
  detail::applyDra(snap, dra);
  for (auto& node : snap.nodes) {
    for (auto& gpu : node.gpus) gpu.busy = node.hasGpuPods;
  }
  return snap;
}

}  // namespace

int NodeState::replicasFor(std::string_view resource) const {
  auto it = sharedReplicas.find(unsharedResourceName(resource));
  return it == sharedReplicas.end() ? 1 : it->second;
}

std::int64_t NodeState::capacityFor(std::string_view resource) const {
  auto it = devices.find(unsharedResourceName(resource));
  return it == devices.end() ? 0 : it->second * replicasFor(resource);
}

bool NodeState::ownsDevicePluginConfig() const {
  return devicePluginConfigName.rfind(kOwnedConfigPrefix, 0) == 0;
}

bool ScaleTarget::selects(const PodState& pod) const {
  if (pod.ns != ns || (selector.empty() && selectorRequirements.empty())) return false;
  return std::all_of(selector.begin(), selector.end(),
                     [&](const auto& kv) {
                       auto it = pod.labels.find(kv.first);
                       return it != pod.labels.end() && it->second == kv.second;
                     }) &&
         std::all_of(selectorRequirements.begin(), selectorRequirements.end(),
                     [&](const core::Requirement& r) {
                       auto it = pod.labels.find(r.key);
                       return r.matchesValue(it == pod.labels.end() ? nullptr : &it->second);
                     });
}

bool HpaState::ownedByScaledObject() const {
  return controller && controller->kind == "ScaledObject" &&
         controller->apiVersion.starts_with("keda.sh/");
}

std::string HpaState::ceilingField() const {
  if (capacityRequest) {
    return fmt::format("{} {} status.grantedReplicas", kCapacityRequestKind,
                       capacityRequestName(name).value_or(name));
  }
  return ownedByScaledObject() ? "ScaledObject " + controller->name + " spec.maxReplicaCount"
                               : "maxReplicas";
}

bool HpaState::hasCondition(std::string_view type, std::string_view status,
                            std::string_view reason) const {
  return std::any_of(conditions.begin(), conditions.end(), [&](const HpaCondition& c) {
    return c.type == type && c.status == status && (reason.empty() || c.reason == reason);
  });
}

std::string HpaState::annotation(std::string_view key) const {
  auto it = annotations.find(std::string(key));
  return it == annotations.end() ? std::string() : it->second;
}

const NodeState* ClusterSnapshot::node(std::string_view name) const {
  auto idx = nodeIndex(name);
  return idx ? &nodes[*idx] : nullptr;
}

std::optional<std::size_t> ClusterSnapshot::nodeIndex(std::string_view name) const {
  auto it = nodeIndex_.find(std::string(name));
  if (it == nodeIndex_.end()) return std::nullopt;
  return it->second;
}

const ScaleTarget* ClusterSnapshot::target(std::string_view ns, std::string_view kind,
                                           std::string_view name) const {
  using Key = std::tuple<std::string_view, std::string_view, std::string_view>;
  const Key key{ns, kind, name};
  auto it =
      std::lower_bound(targets.begin(), targets.end(), key, [](const ScaleTarget& t, const Key& k) {
        return Key{t.ns, t.kind, t.name} < k;
      });
  return it != targets.end() && Key{it->ns, it->kind, it->name} == key ? &*it : nullptr;
}

const HpaState* ClusterSnapshot::hpa(std::string_view ns, std::string_view name) const {
  auto it = std::lower_bound(
      hpas.begin(), hpas.end(), std::pair{ns, name}, [](const HpaState& h, const auto& key) {
        return std::pair<std::string_view, std::string_view>{h.ns, h.name} < key;
      });
  return it != hpas.end() && it->ns == ns && it->name == name ? &*it : nullptr;
}

core::Result<ClusterSnapshot> buildSnapshot(const nlohmann::json& dump) {
  auto items = collectKubeItems(dump);
  if (!items)
    return core::Status::invalid("malformed Kubernetes dump: " + items.status().message());
  return build(*items);
}

core::Result<ClusterSnapshot> buildSnapshot(const std::vector<KubeItem>& items) {
  return build(items);
}

}  // namespace gpuscale::partition
