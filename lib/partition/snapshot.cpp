#include "gpuscale/partition/snapshot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "config_sources.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/mig_restore.h"
#include "gpuscale/partition/resource_names.h"
#include "hpa_parse.h"
#include "json_fields.h"
#include "quantity.h"

namespace gpuscale::partition {
namespace {

namespace jf = json_fields;
using nlohmann::json;

std::optional<std::int64_t> labelInt(const Labels& labels, const std::string& key) {
  auto it = labels.find(key);
  if (it == labels.end()) return std::nullopt;
  auto q = parseQuantity(it->second);
  if (!q || *q < 0) return std::nullopt;
  return static_cast<std::int64_t>(*q);
}

std::string label(const Labels& labels, std::string_view key) {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? std::string() : it->second;
}

ResourceCounts gpuResources(const json& list, std::string_view field) {
  ResourceCounts out;
  for (const auto& [name, value] : jf::object(list, field).items()) {
    if (name.rfind(kNvidiaPrefix, 0) != 0) continue;
    auto q = parseQuantity(jf::quantityText(jf::object(list, field), name));
    if (!q || *q < 0) jf::fail(std::string(field) + "." + name, "a non-negative quantity");
    out[name] = static_cast<std::int64_t>(std::ceil(*q));
  }
  return out;
}

// One container's GPU requests: max(request, limit) per resource (extended resources need both
// equal).
ResourceCounts containerGpuRequests(const json& container) {
  const json& res = jf::object(container, "resources");
  ResourceCounts requests = gpuResources(res, "requests");
  for (const auto& [name, n] : gpuResources(res, "limits")) {
    requests[name] = std::max(requests[name], n);
  }
  return requests;
}

// Per-pod GPU requests as the scheduler counts them (the pod's effective request): per resource,
// the larger of what runs together (app containers plus sidecars, the init containers with
// restartPolicy Always) and the peak of the init phase (each other init container plus the
// sidecars started before it).
ResourceCounts podGpuRequests(const json& podSpec) {
  ResourceCounts sidecars, initPeak;
  for (const auto& c : jf::array(podSpec, "initContainers")) {
    const ResourceCounts requests = containerGpuRequests(c);
    if (jf::string(c, "restartPolicy") == "Always") {
      for (const auto& [name, n] : requests) sidecars[name] += n;
      continue;
    }
    for (const auto& [name, n] : requests) {
      auto before = sidecars.find(name);
      const std::int64_t alongside = before == sidecars.end() ? 0 : before->second;
      initPeak[name] = std::max(initPeak[name], n + alongside);
    }
  }
  ResourceCounts out = sidecars;
  for (const auto& c : jf::array(podSpec, "containers")) {
    for (const auto& [name, n] : containerGpuRequests(c)) out[name] += n;
  }
  for (const auto& [name, n] : initPeak) out[name] = std::max(out[name], n);
  return out;
}

// Dynamic Resource Allocation claims (the pod's, or a container's reference to one): the device a
// claim binds is not in the pod, so the pod may hold any GPU of its node.
bool hasResourceClaims(const json& podSpec) {
  if (!jf::array(podSpec, "resourceClaims").empty()) return true;
  for (const char* list : {"containers", "initContainers"}) {
    for (const auto& c : jf::array(podSpec, list)) {
      if (!jf::array(jf::object(c, "resources"), "claims").empty()) return true;
    }
  }
  return false;
}

// Every GPU's setting under config `name`, from the first ConfigMap that resolves it for all of
// them; `physical` is the GPU count (nullopt: derive it from the single strategy's device count).
std::optional<std::vector<GpuState>> resolveNamed(const NodeState& node, const std::string& name,
                                                  std::optional<int> physical,
                                                  ConfigSources& sources) {
  auto count = labelInt(node.labels, "nvidia.com/gpu.count");
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
  auto count = labelInt(node.labels, "nvidia.com/gpu.count");
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
  const json* expect = nullptr;
  if (auto then = j.find("then"); then != j.end() && then->is_object()) {
    if (auto e = then->find("expect"); e != then->end()) expect = &*e;
  }
  if (expect == nullptr) {
    if (auto e = j.find("expect"); e != j.end()) expect = &*e;
  }
  if (expect == nullptr || !expect->is_object()) return out;
  for (const auto& [resource, count] : expect->items()) {
    if (count.is_number_integer() && count.get<std::int64_t>() >= 0)
      out[resource] = count.get<std::int64_t>();
  }
  return out;
}

NodeState parseNode(const json& item, ConfigSources& sources) {
  const json& meta = jf::object(item, "metadata");
  NodeState n;
  n.name = jf::string(meta, "name");
  n.labels = jf::stringMap(meta, "labels");
  n.schedulable = !jf::object(item, "spec").value("unschedulable", false);
  n.allocatable = gpuResources(jf::object(item, "status"), "allocatable");
  n.product = label(n.labels, "nvidia.com/gpu.product");
  n.migConfig = label(n.labels, k8s::kMigConfigLabel);
  n.migConfigState = label(n.labels, k8s::kMigConfigStateLabel);
  n.devicePluginConfigName = label(n.labels, k8s::kDevicePluginConfigLabel);
  const Labels annotations = jf::stringMap(meta, "annotations");
  if (auto it = annotations.find(std::string(k8s::kIntentAnnotation)); it != annotations.end()) {
    n.hasIntent = true;
    n.expected = expectedAllocatable(it->second);
  }
  if (auto it = annotations.find(std::string(k8s::kBackoffAnnotation)); it != annotations.end()) {
    n.backoffUntil = core::parseRfc3339(it->second);
  }
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

// The pod's PodScheduled=False/Unschedulable condition, if any.
const json* unschedulableCondition(const json& status) {
  for (const auto& c : jf::array(status, "conditions")) {
    if (jf::string(c, "type") == "PodScheduled" && jf::string(c, "status") == "False" &&
        jf::string(c, "reason") == "Unschedulable") {
      return &c;
    }
  }
  return nullptr;
}

// "nvidia.com/..." of an "Insufficient nvidia.com/..." scheduling failure, else "".
std::string insufficientResource(const json& condition) {
  const std::string message = jf::string(condition, "message");
  auto at = message.find("Insufficient nvidia.com/");
  if (at == std::string::npos) return {};
  auto begin = at + std::string_view("Insufficient ").size();
  auto end = message.find_first_of(" ,", begin);
  return message.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

PodState parsePod(const json& item) {
  const json& meta = jf::object(item, "metadata");
  const json& spec = jf::object(item, "spec");
  const json& status = jf::object(item, "status");
  PodState p;
  p.ns = jf::string(meta, "namespace", "default");
  p.name = jf::string(meta, "name");
  p.labels = jf::stringMap(meta, "labels");
  p.terminating = jf::find(meta, "deletionTimestamp") != nullptr;
  p.nodeName = jf::string(spec, "nodeName");
  p.phase = jf::string(status, "phase", "Pending");
  p.nominated = !jf::string(status, "nominatedNodeName").empty();
  p.gpuRequests = podGpuRequests(spec);
  p.startedAt = core::parseRfc3339(jf::string(status, "startTime"));
  if (!p.startedAt) p.startedAt = core::parseRfc3339(jf::string(meta, "creationTimestamp"));
  p.resourceClaims = hasResourceClaims(spec);
  for (const auto& c : jf::array(status, "conditions")) {
    if (jf::string(c, "type") == "Ready") p.ready = jf::string(c, "status") == "True";
  }
  if (p.phase == "Pending" && p.nodeName.empty()) {
    if (const json* c = unschedulableCondition(status)) {
      p.unschedulable = true;
      p.insufficientResource = insufficientResource(*c);
    }
  }
  return p;
}

// A PriorityClass's value (int32 in the API) and whether it is the global default; when several
// claim the default, the lowest value wins, as the Priority admission plugin picks.
void addPriorityClass(const json& item, PriorityClasses& classes) {
  const std::string name = jf::string(jf::object(item, "metadata"), "name");
  const auto value = static_cast<int>(jf::integer(item, "value", 0));
  classes.values[name] = value;
  const json* isDefault = jf::find(item, "globalDefault");
  if (isDefault == nullptr || !isDefault->is_boolean() || !isDefault->get<bool>()) return;
  if (!classes.globalDefault || value < classes.values.at(*classes.globalDefault)) {
    classes.globalDefault = name;
  }
}

ScaleTarget parseTarget(const json& item, const std::string& kind) {
  const json& meta = jf::object(item, "metadata");
  const json& spec = jf::object(item, "spec");
  const json& podSpec = jf::object(jf::object(spec, "template"), "spec");
  ScaleTarget t;
  t.kind = kind;
  t.ns = jf::string(meta, "namespace", "default");
  t.name = jf::string(meta, "name");
  t.specReplicas = static_cast<int>(jf::integer(spec, "replicas", 1));
  t.selector = jf::stringMap(jf::object(spec, "selector"), "matchLabels");
  t.gpuRequests = podGpuRequests(podSpec);
  t.nodeSelector = jf::stringMap(podSpec, "nodeSelector");
  t.priorityClassName = jf::string(podSpec, "priorityClassName");
  return t;
}

// Flattens Lists (and arrays of them) into the objects they hold.
void collectItems(const json& node, std::vector<KubeItem>& out) {
  if (node.is_array()) {
    for (const auto& child : node) collectItems(child, out);
  } else if (node.is_object() && node.contains("items")) {
    if (!node["items"].is_array()) jf::fail("items", "a list");
    for (const auto& child : node["items"]) collectItems(child, out);
  } else if (node.is_object()) {
    out.push_back({{}, &node});
  } else {
    jf::fail("item", "an object");
  }
}

std::string describe(const KubeItem& input, std::size_t index) {
  const json& item = *input.object;
  std::string kind = !input.kind.empty() ? std::string(input.kind)
                     : item.contains("kind") && item["kind"].is_string()
                         ? item["kind"].get<std::string>()
                         : "?";
  std::string name;
  if (item.contains("metadata") && item["metadata"].is_object()) {
    const json& m = item["metadata"];
    if (m.contains("namespace") && m["namespace"].is_string())
      name = m["namespace"].get<std::string>() + "/";
    if (m.contains("name") && m["name"].is_string()) name += m["name"].get<std::string>();
  }
  return name.empty() ? fmt::format("item {} ({})", index, kind)
                      : fmt::format("item {} ({} {})", index, kind, name);
}

// Runs `parse` on items[index], naming the item in any shape error.
template <typename Parse>
void withItemContext(const KubeItem& item, std::size_t index, Parse&& parse) {
  try {
    parse();
  } catch (const jf::JsonShapeError& e) {
    throw jf::JsonShapeError{describe(item, index) + ": " + e.message};
  } catch (const json::exception& e) {
    throw jf::JsonShapeError{describe(item, index) + ": " + e.what()};
  }
}

ClusterSnapshot build(const std::vector<KubeItem>& items) {
  ClusterSnapshot snap;
  std::vector<ConfigMapState> configMaps;
  std::vector<std::size_t> nodes;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json& item = *items[i].object;
    withItemContext(items[i], i, [&] {
      const std::string kind =
          items[i].kind.empty() ? jf::string(item, "kind") : std::string(items[i].kind);
      if (kind == "Node") {
        nodes.push_back(i);
      } else if (kind == "Pod") {
        snap.pods.push_back(parsePod(item));
      } else if (kind == "HorizontalPodAutoscaler") {
        snap.hpas.push_back(detail::parseHpa(item));
      } else if (kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet") {
        snap.targets.push_back(parseTarget(item, kind));
      } else if (kind == "PriorityClass") {
        addPriorityClass(item, snap.priorityClasses);
      } else if (kind == "ConfigMap") {
        const json& meta = jf::object(item, "metadata");
        configMaps.push_back({jf::string(meta, "namespace", "default"), jf::string(meta, "name"),
                              jf::stringMap(item, "data")});
      }
    });
  }
  ConfigSources sources(std::move(configMaps));
  for (std::size_t i : nodes) {
    withItemContext(items[i], i,
                    [&] { snap.nodes.push_back(parseNode(*items[i].object, sources)); });
  }
  std::sort(snap.nodes.begin(), snap.nodes.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < snap.nodes.size(); ++i) snap.nodeIndex_[snap.nodes[i].name] = i;
  auto byName = [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  };
  std::sort(snap.pods.begin(), snap.pods.end(), byName);
  std::sort(snap.hpas.begin(), snap.hpas.end(), byName);
  std::sort(snap.targets.begin(), snap.targets.end(), [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.kind, a.name) < std::tie(b.ns, b.kind, b.name);
  });
  for (const auto& pod : snap.pods) {
    if (pod.nodeName.empty() || !pod.active() || !pod.usesGpu()) continue;
    auto idx = snap.nodeIndex(pod.nodeName);
    if (!idx) continue;
    NodeState& node = snap.nodes[*idx];
    node.hasGpuPods = true;
    for (const auto& [name, n] : pod.gpuRequests) node.used[name] += n;
  }
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
  if (pod.ns != ns || selector.empty()) return false;
  return std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
    auto it = pod.labels.find(kv.first);
    return it != pod.labels.end() && it->second == kv.second;
  });
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
  for (const auto& t : targets) {
    if (t.ns == ns && t.kind == kind && t.name == name) return &t;
  }
  return nullptr;
}

const HpaState* ClusterSnapshot::hpa(std::string_view ns, std::string_view name) const {
  auto it = std::lower_bound(
      hpas.begin(), hpas.end(), std::pair{ns, name}, [](const HpaState& h, const auto& key) {
        return std::pair<std::string_view, std::string_view>{h.ns, h.name} < key;
      });
  return it != hpas.end() && it->ns == ns && it->name == name ? &*it : nullptr;
}

core::Result<ClusterSnapshot> buildSnapshot(const nlohmann::json& dump) {
  std::vector<KubeItem> items;
  try {
    collectItems(dump, items);
  } catch (const jf::JsonShapeError& e) {
    return core::Status::invalid("malformed Kubernetes dump: " + e.message);
  }
  return buildSnapshot(items);
}

core::Result<ClusterSnapshot> buildSnapshot(const std::vector<KubeItem>& items) {
  try {
    return build(items);
  } catch (const jf::JsonShapeError& e) {
    return core::Status::invalid("malformed Kubernetes dump: " + e.message);
  } catch (const json::exception& e) {
    return core::Status::invalid(std::string("malformed Kubernetes dump: ") + e.what());
  }
}

}  // namespace gpuscale::partition
