// The writes and fresh reads of a node operation (node_operation.h): its config entry in the GPU
// Operator's ConfigMaps, the reshape taint, and the re-check for GPU users right before a MIG
// change.
#include <map>

#include <fmt/format.h>

#include "actuator_internal.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/reconciler/config_maps_init.h"
#include "gpuscale/reconciler/node_operation.h"
#include "gpuscale/reconciler/optimistic_write.h"

namespace gpuscale::reconciler {
namespace actuator_detail {

using nlohmann::json;

kube::ResourceRef nodeRef(const std::string& name) {
  return kube::ResourceRef::collection("", "v1", "nodes").named(name);
}

kube::ResourceRef hpaRef(const std::string& ns, const std::string& name) {
  return kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers", ns)
      .named(name);
}

kube::ResourceRef configMapRef(const std::string& ns, const std::string& name) {
  return kube::ResourceRef::collection("", "v1", "configmaps", ns).named(name);
}

kube::ResourceRef scaledObjectsRef(std::string_view ns) {
  return kube::ResourceRef::collection("keda.sh", "v1alpha1", "scaledobjects", ns);
}

core::Result<partition::NodeObject> getNode(kube::KubeClient& client, const std::string& name) {
  auto node = client.get(nodeRef(name));
  if (!node) return node.status();
  return partition::readNode(*node);
}

core::Result<partition::HpaState> getHpa(kube::KubeClient& client, const std::string& ns,
                                         const std::string& name) {
  auto hpa = client.get(hpaRef(ns, name));
  if (!hpa) return hpa.status();
  return partition::readHpa(*hpa);
}

std::string uidOf(const kube::Object& object) {
  auto meta = partition::readMeta(object);
  return meta ? meta->uid : std::string();
}

core::Result<WriteResult> patchNodeOfIntent(kube::KubeClient& client, const std::string& node,
                                            const NodeIntent& intent, IntentMatch match,
                                            const NodeChangeFn& change) {
  return patchWithRetry(
      client, nodeRef(node),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        auto current = partition::readNode(object);
        if (!current) return current.status();
        auto ours = decodeNodeIntent(current->meta.annotation(k8s::kIntentAnnotation));
        const bool still =
            match == IntentMatch::kSamePlan ? ours && ours->plan == intent.plan : ours == intent;
        if (!still) return noChange();
        return change(*current);
      });
}

std::optional<json> reshapeTaints(const partition::NodeObject& node, bool present) {
  json taints = json::array();
  bool found = false;
  for (const auto& t : node.taints) {
    if (t.key == k8s::kReshapeTaint) {
      found = true;
      if (!present) continue;
    }
    json taint{{"key", t.key}, {"effect", t.effect}};
    if (!t.value.empty()) taint["value"] = t.value;
    if (!t.timeAdded.empty()) taint["timeAdded"] = t.timeAdded;
    taints.push_back(std::move(taint));
  }
  if (found == present) return std::nullopt;
  if (present)
    taints.push_back({{"key", std::string(k8s::kReshapeTaint)}, {"effect", "NoSchedule"}});
  return taints;
}

}  // namespace actuator_detail

namespace {

using actuator_detail::configMapRef;
using actuator_detail::noChange;
using actuator_detail::nodeRef;
using nlohmann::json;

// An earlier config of `node` (by exact ownership, never by name prefix: another node's name may
// share the prefix), other than the one being written and the one it replaces.
bool isStale(const std::string& key, const std::string& node, const NodeIntent& intent) {
  return partition::isOwnedConfigOf(key, node) && key != intent.label && key != intent.previous;
}

}  // namespace

core::Status NodeOperations::taintForReshape(const std::string& node, const NodeIntent& intent) {
  auto r = actuator_detail::patchNodeOfIntent(
      *client_, node, intent, actuator_detail::IntentMatch::kExact,
      [&](const partition::NodeObject& current) -> core::Result<std::optional<kube::Object>> {
        auto taints = actuator_detail::reshapeTaints(current, true);
        if (!taints) return noChange();
        return std::optional<kube::Object>(json{{"spec", {{"taints", *taints}}}});
      });
  return r ? core::Status() : r.status();
}

core::Result<bool> NodeOperations::writeConfig(const std::string& node, const NodeIntent& intent) {
  return intent.kind == NodeOpKind::kMig ? writeMigConfig(node, intent)
                                         : writeDevicePluginConfig(node, intent);
}

core::Result<bool> NodeOperations::writeMigConfig(const std::string& node,
                                                  const NodeIntent& intent) {
  auto wanted = partition::parseMigPartedConfig(intent.config);
  if (!wanted) return wanted.status();
  // mig-manager reads only the ConfigMap the ClusterPolicy names: the previous config must be
  // there too, or restoring it after a failure would fail as well, and so must every stock config
  // an operator may relabel the node to later. They are carried over from what mig-manager would
  // read without a custom ConfigMap: the node's generated configs, then the operator's defaults.
  const std::vector<partition::MigPartedConfig> stock = readMigPartedConfigMaps(
      *client_, options_.operatorNamespace, {node + "-mig-config", options_.defaultMigConfigMap});
  auto r = upsertWithRetry(
      *client_, configMapRef(options_.operatorNamespace, options_.migConfigMap), "v1", "ConfigMap",
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        auto cm = partition::readConfigMap(object);
        if (!cm) return cm.status();
        partition::MigPartedConfig file;
        const std::string text = cm->value("config.yaml");
        if (!text.empty()) {
          auto parsed = partition::parseMigPartedConfig(text);
          if (!parsed) {
            return core::Status::invalid("ConfigMap " + options_.migConfigMap +
                                         " holds a config.yaml mig-parted rejects; not touching "
                                         "it: " +
                                         parsed.status().message());
          }
          file = std::move(*parsed);
        }
        partition::MigPartedConfig before = file;
        for (const auto& [name, entries] : wanted->configs) file.configs[name] = entries;
        partition::carryOverConfigs(file, stock);
        std::erase_if(file.configs,
                      [&](const auto& kv) { return isStale(kv.first, node, intent); });
        if (file == before && !text.empty()) return noChange();
        return std::optional<kube::Object>(
            json{{"data", {{"config.yaml", partition::emitMigPartedConfig(file)}}}});
      });
  if (!r) return r.status();
  return r->changed;
}

core::Result<bool> NodeOperations::writeDevicePluginConfig(const std::string& node,
                                                           const NodeIntent& intent) {
  auto r = upsertWithRetry(
      *client_, configMapRef(options_.operatorNamespace, options_.devicePluginConfigMap), "v1",
      "ConfigMap", [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        auto cm = partition::readConfigMap(object);
        if (!cm) return cm.status();
        json data = json::object();
        if (cm->value(intent.label) != intent.config) data[intent.label] = intent.config;
        for (const auto& [key, value] : cm->data) {
          if (isStale(key, node, intent)) data[key] = nullptr;
        }
        if (data.empty()) return noChange();
        return std::optional<kube::Object>(json{{"data", data}});
      });
  if (!r) return r.status();
  return r->changed;
}

core::Status NodeOperations::recordConfigWritten(const std::string& node, const NodeIntent& intent,
                                                 TimePoint now) {
  NodeIntent recorded = intent;
  recorded.configWritten = now;
  auto r = actuator_detail::patchNodeOfIntent(
      *client_, node, intent, actuator_detail::IntentMatch::kExact,
      [&](const partition::NodeObject&) -> core::Result<std::optional<kube::Object>> {
        return std::optional<kube::Object>(
            json{{"metadata",
                  {{"annotations",
                    {{std::string(k8s::kIntentAnnotation), encodeNodeIntent(recorded)}}}}}});
      });
  return r ? core::Status() : r.status();
}

core::Result<std::string> NodeOperations::podInTheWay(const std::string& node,
                                                      const std::vector<int>& gpus, TimePoint now) {
  kube::ListOptions options;
  options.fieldSelector = "spec.nodeName=" + node;
  auto pods = client_->list(kube::ResourceRef::collection("", "v1", "pods"), options);
  if (!pods) return pods.status();
  std::map<std::string, std::string> users;  // namespace/name -> what makes it a GPU user
  NodeGpuPods gpuPods;
  for (const auto& object : pods->items) {
    auto pod = partition::readPod(object);
    if (!pod) {
      // A pod that does not read may hold anything: it is in the way.
      auto meta = partition::readMeta(object);
      return fmt::format("{} (unreadable: {})", meta ? meta->ns + "/" + meta->name : "?",
                         pod.status().message());
    }
    if (!pod->active() || !pod->usesGpu()) continue;
    const std::string key = pod->ns + "/" + pod->name;
    users[key] = pod->gpuUse;
    gpuPods[key] = pod->startedAt.value_or(TimePoint{});
  }
  if (users.empty()) return std::string();
  const auto& [first, use] = *users.begin();
  auto occupancy = gpuPods_->occupancy(node, gpuPods, now);
  if (!occupancy) return fmt::format("{} ({})", first, use);  // no per-GPU mapping: node busy
  if (!occupancy->settling.empty()) {
    return fmt::format("{} (just started, not in the GPU metrics yet)",
                       *occupancy->settling.begin());
  }
  for (int g : gpus) {
    if (!occupancy->idle(g)) {
      return fmt::format("{} (GPU {} {})", first, g,
                         occupancy->reported.contains(g) ? "holds a pod" : "not reported");
    }
  }
  return std::string();
}

}  // namespace gpuscale::reconciler
