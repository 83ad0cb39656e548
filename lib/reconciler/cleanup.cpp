#include "gpuscale/reconciler/cleanup.h"

#include <thread>

#include <fmt/format.h>

#include "actuator_internal.h"
#include "ceiling_holder.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/reconciler/intent.h"
#include "gpuscale/reconciler/optimistic_write.h"

namespace gpuscale::reconciler {
namespace {

using json = nlohmann::json;
constexpr std::string_view kPrefix = "gpuscale.io/";

bool isOurKey(std::string_view key) { return key.starts_with(kPrefix); }

kube::ResourceRef nodes() { return kube::ResourceRef::collection("", "v1", "nodes"); }

kube::ResourceRef hpas(std::string_view ns = {}) {
  return kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers", ns);
}

// mig-manager is still rebuilding the node's GPUs for a change the reconciler started.
bool migChangeRunning(const partition::NodeObject& node) {
  auto intent = decodeNodeIntent(node.meta.annotation(k8s::kIntentAnnotation));
  if (!intent || intent->kind != NodeOpKind::kMig || intent->phase != NodeOpPhase::kApplied) {
    return false;
  }
  const std::string state = node.meta.label(k8s::kMigConfigStateLabel);
  return state == "pending" || state == "rebooting";
}

void pause(const CleanupOptions& options) {
  if (options.sleep) {
    options.sleep(options.pollInterval);
  } else {
    std::this_thread::sleep_for(options.pollInterval);
  }
}

core::Status stopReconciler(kube::KubeClient& client, const CleanupOptions& options) {
  const std::string what = "deployment/" + options.stopDeployment;
  auto scale = kube::ResourceRef::collection("apps", "v1", "deployments", options.state.ns)
                   .named(options.stopDeployment);
  scale.subresource = "scale";
  auto scaled = client.patch(scale, kube::PatchType::kMerge, json{{"spec", {{"replicas", 0}}}});
  if (!scaled) {
    if (scaled.status().httpCode() == 404) return {};  // already uninstalled
    return scaled.status().withContext("scaling " + what + " to 0");
  }
  const auto selector = scaled->value(json::json_pointer("/status/selector"), std::string());
  if (selector.empty()) {
    return core::Status::invalid(what + "/scale names no pod selector");
  }
  const auto deadline = options.now() + options.waitTimeout;
  for (;;) {
    kube::ListOptions list;
    list.labelSelector = selector;
    auto pods =
        client.list(kube::ResourceRef::collection("", "v1", "pods", options.state.ns), list);
    if (!pods) return pods.status().withContext("listing the pods of " + what);
    if (pods->items.empty()) return {};
    if (options.now() >= deadline) {
      return core::Status::timeout(
          fmt::format("{} pod(s) of {} still run after the wait; nothing was cleaned",
                      pods->items.size(), what));
    }
    pause(options);
  }
}

// The nodes whose MIG change is still running, once none is or the wait is over.
core::Result<std::vector<std::string>> waitForNodeOperations(kube::KubeClient& client,
                                                             const CleanupOptions& options) {
  const auto deadline = options.now() + options.waitTimeout;
  for (;;) {
    auto list = client.list(nodes(), {});
    if (!list) return list.status().withContext("listing nodes");
    std::vector<std::string> running;
    for (const auto& item : list->items) {
      auto node = partition::readNode(item);
      if (node && migChangeRunning(*node)) running.push_back(node->meta.name);
    }
    if (running.empty() || options.now() >= deadline) return running;
    pause(options);
  }
}

// The merge patch that takes gpuscale off `node` (nullopt: nothing to take off).
std::optional<json> nodeCleanupPatch(const partition::NodeObject& node,
                                     const CleanupOptions& options) {
  json patch = json::object();
  for (const auto& [key, value] : node.meta.labels) {
    if (isOurKey(key)) patch["metadata"]["labels"][key] = nullptr;
  }
  for (const auto& [key, value] : node.meta.annotations) {
    if (isOurKey(key)) patch["metadata"]["annotations"][key] = nullptr;
  }
  if (auto taints = actuator_detail::reshapeTaints(node, false)) patch["spec"]["taints"] = *taints;
  if (options.restoreStockConfigs) {
    const std::pair<std::string_view, const std::string*> stock[] = {
        {k8s::kMigConfigLabel, &options.stockMigConfig},
        {k8s::kDevicePluginConfigLabel, &options.stockDevicePluginConfig}};
    for (const auto& [key, to] : stock) {
      const std::string value = node.meta.label(key);
      if (value.empty() || !partition::isOwnedConfigOf(value, node.meta.name)) continue;
      patch["metadata"]["labels"][std::string(key)] = to->empty() ? json(nullptr) : json(*to);
    }
  }
  if (patch.empty()) return std::nullopt;
  return patch;
}

void cleanNodes(kube::KubeClient& client, const CleanupOptions& options, CleanupReport& report) {
  auto list = client.list(nodes(), {});
  if (!list) {
    report.errors.push_back("listing nodes: " + list.status().message());
    return;
  }
  for (const auto& item : list->items) {
    auto node = partition::readNode(item);
    if (!node || !nodeCleanupPatch(*node, options)) continue;
    const std::string name = node->meta.name;
    auto r = patchWithRetry(
        client, nodes().named(name),
        [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
          auto current = partition::readNode(object);
          if (!current) return current.status();
          return nodeCleanupPatch(*current, options);
        });
    if (!r) {
      report.errors.push_back("node " + name + ": " + r.status().message());
    } else if (r->changed) {
      report.nodesCleaned.push_back(name);
    }
  }
}

// Restores the recorded ceilings where they are held (ceiling_holder.h: the HPA's maxReplicas, or
// the ScaledObject's maxReplicaCount for an HPA KEDA owns, which KEDA would copy back over the
// HPA's); false when a ceiling whose object is still there could not be restored.
bool restoreMaxReplicas(kube::KubeClient& client, const std::map<std::string, std::string>& records,
                        CleanupReport& report) {
  bool all = true;
  for (const auto& [key, text] : records) {
    auto name = splitHpaRecordKey(key);
    auto record = decodeHpaRecord(text);
    if (!name || !record || !record->originalMaxReplicas) continue;
    const int original = *record->originalMaxReplicas;
    const std::string object = name->first + "/" + name->second;
    auto owner = getDemandOwner(client, name->first, name->second);
    if (!owner) {
      if (owner.status().httpCode() == 404) continue;  // gone: nothing to restore
      report.errors.push_back("HPA " + object + ": " + owner.status().message());
      all = false;
      continue;
    }
    if (owner->uid != record->uid) continue;  // recreated since the raise
    const CeilingRef holder = ceilingRefOf(*owner);
    int from = 0;
    auto r = patchWithRetry(
        client, holder.ref,
        [&](const kube::Object& current) -> core::Result<std::optional<kube::Object>> {
          auto value = holder.read(current);
          if (!value) return value.status();
          if (!*value) return std::optional<kube::Object>{};  // recreated
          from = **value;
          if (from == original) return std::optional<kube::Object>{};
          return std::optional<kube::Object>(holder.patch(original));
        });
    if (!r) {
      if (r.status().httpCode() == 404) continue;
      report.errors.push_back("HPA " + object + ": " + r.status().message());
      all = false;
    } else if (r->changed) {
      const std::string where =
          holder.holder == CeilingHolder::kHpa ? "" : " (" + holder.describe() + ")";
      report.hpasRestored.push_back(fmt::format("{}: {} -> {}{}", object, from, original, where));
    }
  }
  return all;
}

// Removes gpuscale's annotations (all `gpuscale.io/` keys but the owner's policy choice) from each
// object of `list`, read from `collection` (HPAs, or KEDA's ScaledObjects, which carry the status
// of the ceilings they hold).
void unannotate(kube::KubeClient& client, const kube::ResourceRef& collection,
                const kube::ObjectList& list, const std::string& kind, CleanupReport& report) {
  auto patchFor = [](const partition::ObjectMeta& meta) -> std::optional<json> {
    json patch = json::object();
    for (const auto& [key, value] : meta.annotations) {
      if (isOurKey(key) && key != k8s::kPolicyAnnotation) {
        patch["metadata"]["annotations"][key] = nullptr;
      }
    }
    if (patch.empty()) return std::nullopt;
    return patch;
  };
  for (const auto& item : list.items) {
    auto meta = partition::readMeta(item);
    if (!meta || !patchFor(*meta)) continue;
    const std::string object = meta->ns + "/" + meta->name;
    auto r = patchWithRetry(
        client, collection.inNamespace(meta->ns).named(meta->name),
        [&](const kube::Object& current) -> core::Result<std::optional<kube::Object>> {
          auto m = partition::readMeta(current);
          if (!m) return m.status();
          return patchFor(*m);
        });
    if (!r) {
      if (r.status().httpCode() != 404) {
        report.errors.push_back(kind + " " + object + ": " + r.status().message());
      }
    } else if (r->changed) {
      report.hpasUnannotated.push_back(kind == "HPA" ? object : kind + " " + object);
    }
  }
}

// KEDA's ScaledObjects, or an empty list where KEDA is not installed (the kind is not served).
core::Result<kube::ObjectList> listScaledObjects(kube::KubeClient& client) {
  auto list = client.list(actuator_detail::scaledObjectsRef(), {});
  if (!list && list.status().httpCode() == 404) return kube::ObjectList{};
  return list;
}

}  // namespace

core::Result<CleanupReport> cleanup(const std::shared_ptr<kube::KubeClient>& client,
                                    const CleanupOptions& options) {
  CleanupReport report;
  if (!options.stopDeployment.empty()) {
    if (auto s = stopReconciler(*client, options); !s.ok()) return s;
  }
  auto running = waitForNodeOperations(*client, options);
  if (!running) return running.status();
  report.stillInFlight = std::move(*running);
  auto hpaList = client->list(hpas(), {});
  if (!hpaList) return hpaList.status().withContext("listing HPAs");
  auto scaledObjectList = listScaledObjects(*client);
  if (!scaledObjectList) return scaledObjectList.status().withContext("listing ScaledObjects");
  HpaStateStore store(client, options.state);
  if (auto s = store.load(); !s.ok()) return s.withContext("reading the state store");
  const auto records = store.records();

  cleanNodes(*client, options, report);
  const bool restored = restoreMaxReplicas(*client, records, report);
  unannotate(*client, hpas(), *hpaList, "HPA", report);
  unannotate(*client, actuator_detail::scaledObjectsRef(), *scaledObjectList, "ScaledObject",
             report);
  if (restored && !options.keepStateStore) {
    const auto ref = actuator_detail::configMapRef(options.state.ns, options.state.name);
    const core::Status s = client->remove(ref);
    if (s.ok()) {
      report.stateStoreDeleted = true;
    } else if (s.httpCode() != 404) {
      report.errors.push_back("state store " + options.state.ns + "/" + options.state.name + ": " +
                              s.message());
    }
  }
  return report;
}

std::string cleanupReportText(const CleanupReport& report) {
  std::string out;
  auto section = [&](std::string_view title, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += fmt::format("{}:\n", title);
    for (const auto& line : lines) out += "  " + line + "\n";
  };
  section("nodes cleaned (reshape taint, gpuscale.io/ labels and annotations)",
          report.nodesCleaned);
  section("HPAs whose ceilings were restored to their original maxReplicas", report.hpasRestored);
  section("HPAs and ScaledObjects whose gpuscale.io/status annotation was removed",
          report.hpasUnannotated);
  if (report.stateStoreDeleted) out += "the state store ConfigMap was deleted\n";
  section(
      "nodes whose MIG change was still running at the end of the wait (cleaned anyway; "
      "check nvidia.com/mig.config.state)",
      report.stillInFlight);
  section("failed (run cleanup again)", report.errors);
  if (out.empty()) out = "nothing to clean: no trace of gpuscale-reconciler found\n";
  return out;
}

}  // namespace gpuscale::reconciler
