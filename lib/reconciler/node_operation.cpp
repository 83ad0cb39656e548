// The node half of KubeActuator: start, advance and finish one node's MIG or time-slicing change.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "actuator_internal.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/mig_restore.h"
#include "gpuscale/reconciler/optimistic_write.h"

namespace gpuscale::reconciler {
namespace {

using actuator_detail::configMapRef;
using actuator_detail::nodeRef;
using nlohmann::json;

std::string opTitle(NodeOpKind kind) {
  switch (kind) {
    case NodeOpKind::kMig:
      return "MigReconfigure";
    case NodeOpKind::kMps:
      return "Mps";
    case NodeOpKind::kTimeSlicing:
      break;
  }
  return "TimeSlicing";
}

partition::Lever leverOf(NodeOpKind kind) {
  switch (kind) {
    case NodeOpKind::kMig:
      return partition::Lever::kMigReshape;
    case NodeOpKind::kMps:
      return partition::Lever::kMps;
    case NodeOpKind::kTimeSlicing:
      break;
  }
  return partition::Lever::kTimeSlicing;
}

// An earlier config of `node` (by exact ownership, never by name prefix: another node's name may
// share the prefix), other than the one being written and the one it replaces.
bool isStale(const std::string& key, const std::string& node, const NodeIntent& intent) {
  return partition::isOwnedConfigOf(key, node) && key != intent.label && key != intent.previous;
}

core::Result<std::optional<kube::Object>> noChange() { return std::optional<kube::Object>{}; }

// The uid of an object a write answered with ("" when it does not read).
std::string uidOf(const kube::Object& object) {
  auto meta = partition::readMeta(object);
  return meta ? meta->uid : std::string();
}

// `node`'s spec.taints with k8s::kReshapeTaint present or absent (others kept as they are), or
// nullopt when it already is so. The whole list goes in the merge patch (merge patches replace
// arrays); the read resourceVersion it carries keeps a concurrent taint change from being lost.
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

// Adds to `patch` the removal of k8s::kReshapeTaint from `node`, if it carries it.
void untaintInto(json& patch, const partition::NodeObject& node) {
  if (auto taints = reshapeTaints(node, false)) patch["spec"]["taints"] = *taints;
}

}  // namespace

core::Status KubeActuator::taintForReshape(const std::string& node, const NodeIntent& intent) {
  auto r = patchWithRetry(
      *client_, nodeRef(node),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        auto current = partition::readNode(object);
        if (!current) return current.status();
        if (decodeNodeIntent(current->meta.annotation(k8s::kIntentAnnotation)) != intent)
          return noChange();
        auto taints = reshapeTaints(*current, true);
        if (!taints) return noChange();
        return std::optional<kube::Object>(json{{"spec", {{"taints", *taints}}}});
      });
  return r ? core::Status() : r.status();
}

core::Status KubeActuator::writeConfig(const std::string& node, const NodeIntent& intent) {
  return intent.kind == NodeOpKind::kMig ? writeMigConfig(node, intent)
                                         : writeDevicePluginConfig(node, intent);
}

core::Status KubeActuator::writeMigConfig(const std::string& node, const NodeIntent& intent) {
  auto wanted = partition::parseMigPartedConfig(intent.config);
  if (!wanted) return wanted.status();
  // mig-manager reads only the ConfigMap the ClusterPolicy names: the previous config must be
  // there too, or restoring it after a failure would fail as well, and so must every stock config
  // an operator may relabel the node to later. They are carried over from what mig-manager would
  // read without a custom ConfigMap: the node's generated configs, then the operator's defaults.
  std::vector<partition::MigPartedConfig> stock;
  for (const std::string& name : {node + "-mig-config", options_.defaultMigConfigMap}) {
    auto cm = client_->get(configMapRef(options_.operatorNamespace, name));
    if (!cm) continue;
    auto read = partition::readConfigMap(*cm);
    if (!read) continue;
    if (auto parsed = partition::parseMigPartedConfig(read->value("config.yaml"))) {
      stock.push_back(std::move(*parsed));
    }
  }
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
  return r ? core::Status() : r.status();
}

core::Status KubeActuator::writeDevicePluginConfig(const std::string& node,
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
  return r ? core::Status() : r.status();
}

core::Result<std::string> KubeActuator::podInTheWay(const std::string& node,
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

bool KubeActuator::startNode(const NodeWork& work, const std::string& plan, TimePoint now,
                             ActuationReport& report) {
  NodeIntent intent = work.intent;
  intent.plan = plan;
  intent.started = now;
  const auto target = EventTarget::node(work.node);
  if (intent.kind == NodeOpKind::kMig) {
    auto busy = podInTheWay(work.node, intent.gpus, now);
    if (!busy || !busy->empty()) {
      std::string why = busy ? "pod " + *busy + " runs there" : busy.status().message();
      events_->record(target, true, "ReshapeSkipped", "not reshaping MIG on this node: " + why);
      report.outcomes.push_back({"mig", "aborted"});
      return false;
    }
  }
  bool written = false;
  auto r = patchWithRetry(
      *client_, nodeRef(work.node),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        written = false;
        auto node = partition::readNode(object);
        if (!node) return node.status();
        if (!node->meta.annotation(k8s::kIntentAnnotation).empty())
          return noChange();  // already in flight
        const std::string state = node->meta.label(k8s::kMigConfigStateLabel);
        if (state == "pending" || state == "failed" || state == "rebooting") return noChange();
        intent.previous = node->meta.label(intent.labelKey());
        if (intent.previous == intent.label) return noChange();
        written = true;
        return std::optional<kube::Object>(
            json{{"metadata",
                  {{"annotations",
                    {{std::string(k8s::kIntentAnnotation), encodeNodeIntent(intent)}}}}}});
      });
  if (!r) {
    degraded_.failed("node_intent", work.node, "could not record intent: " + r.status().message());
    return false;
  }
  degraded_.cleared("node_intent", work.node);
  if (!written) return false;
  startedNodes_.insert(work.node);
  report.outcomes.push_back({std::string(nodeOpKindName(intent.kind)), "started"});
  std::string what =
      intent.kind == NodeOpKind::kMig
          ? fmt::format("MIG config {} -> {}", intent.previous, intent.label)
          : fmt::format("device-plugin config {} -> {}", intent.previous, intent.label);
  events_->record(
      target, false, opTitle(intent.kind) + "Planned",
      fmt::format("plan {}: {}; expecting allocatable {}", plan, what, json(intent.expect).dump()));
  return advanceNode(work.node, now, report);
}

bool KubeActuator::advanceNode(const std::string& name, TimePoint now, ActuationReport& report) {
  auto node = actuator_detail::getNode(*client_, name);
  if (!node) {
    if (k8s::isNotFound(node.status())) startedNodes_.erase(name);
    return !k8s::isNotFound(node.status());
  }
  auto intent = decodeNodeIntent(node->meta.annotation(k8s::kIntentAnnotation));
  if (!intent) {
    startedNodes_.erase(name);
    return false;
  }
  if (!nodeIntentOwnedBy(*intent, name)) {
    // Not one the reconciler could have written: never acted on (the node stays in transition
    // for the planner, so nothing else changes it either).
    degraded_.failed("node_intent_invalid", name,
                     "ignoring an intent annotation that names configs this node does not own");
    startedNodes_.erase(name);
    return false;
  }
  degraded_.cleared("node_intent_invalid", name);
  const auto target = EventTarget::node(name, node->meta.uid);
  if (intent->phase == NodeOpPhase::kPrepared) {
    if (now - intent->started > options_.allocatableTimeout) {
      finishNode(name, *intent, "failed", "could not prepare the change in time", false, true, now,
                 report);
      return false;
    }
    if (auto s = writeConfig(name, *intent); !s.ok()) {
      degraded_.failed("partition_config", name,
                       "writing config " + intent->label + " failed: " + s.message());
      return true;
    }
    degraded_.cleared("partition_config", name);
    if (intent->kind == NodeOpKind::kMig) {
      // New pods are kept off the node first, so the check below stays true until mig-manager
      // runs; a pod may have started since the plan was made.
      if (auto s = taintForReshape(name, *intent); !s.ok()) {
        degraded_.failed("reshape_taint", name, "tainting the node failed: " + s.message());
        return true;
      }
      degraded_.cleared("reshape_taint", name);
      auto busy = podInTheWay(name, intent->gpus, now);
      if (!busy) return true;
      if (!busy->empty()) {
        finishNode(name, *intent, "aborted",
                   "pod " + *busy + " started on the node before the reshape; nothing changed",
                   false, false, now, report);
        return false;
      }
    }
    NodeIntent applied = *intent;
    applied.phase = NodeOpPhase::kApplied;
    applied.applied = now;
    auto r = patchWithRetry(
        *client_, nodeRef(name),
        [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
          auto current = partition::readNode(object);
          if (!current) return current.status();
          if (decodeNodeIntent(current->meta.annotation(k8s::kIntentAnnotation)) != intent)
            return noChange();
          json annotations{{std::string(k8s::kIntentAnnotation), encodeNodeIntent(applied)}};
          if (intent->kind == NodeOpKind::kMig) {
            // What a give-back returns to (partition/mig_restore.h).
            auto restore = partition::nextMigRestore(
                partition::decodeMigRestore(current->meta.annotation(k8s::kMigRestoreAnnotation)),
                current->meta.label(k8s::kMigConfigLabel), intent->label);
            annotations[std::string(k8s::kMigRestoreAnnotation)] =
                restore ? json(partition::encodeMigRestore(*restore)) : json(nullptr);
          }
          return std::optional<kube::Object>(
              json{{"metadata",
                    {{"labels", {{std::string(intent->labelKey()), intent->label}}},
                     {"annotations", annotations}}}});
        });
    if (!r) {
      degraded_.failed(
          "label_flip", name,
          fmt::format("flipping {} failed: {}", intent->labelKey(), r.status().message()));
      return true;
    }
    degraded_.cleared("label_flip", name);
    if (r->changed) {
      events_->record(target, false, opTitle(intent->kind) + "Started",
                      fmt::format("plan {}: {}={} set; waiting for the GPU Operator", intent->plan,
                                  intent->labelKey(), intent->label));
    }
    return true;
  }
  // Applied: wait for the operator's answer.
  if (node->meta.label(intent->labelKey()) != intent->label) {
    finishNode(name, *intent, "superseded",
               fmt::format("{} was changed by someone else to \"{}\"", intent->labelKey(),
                           node->meta.label(intent->labelKey())),
               false, false, now, report);
    return false;
  }
  const auto since = now - intent->applied.value_or(intent->started);
  const bool allocatableReady = actuator_detail::allocatableMatches(*node, intent->expect);
  if (intent->kind == NodeOpKind::kMig) {
    const std::string state = node->meta.label(k8s::kMigConfigStateLabel);
    if (state == "failed") {
      finishNode(
          name, *intent, "failed",
          "mig-manager reported failed; previous config \"" + intent->previous + "\" restored",
          true, true, now, report);
      return false;
    }
    if (state == "success" && allocatableReady && intent->then) {
      return continueWithTimeSlicing(name, *intent, now, report);
    }
    if (state == "success" && allocatableReady) {
      finishNode(name, *intent, "success",
                 fmt::format("MIG config {} applied and allocatable shows {}", intent->label,
                             json(intent->expect).dump()),
                 false, false, now, report);
      return false;
    }
    if (since > options_.migTimeout) {
      const bool applied = state == "success";
      finishNode(name, *intent, "timeout",
                 applied ? "MIG config applied but allocatable never showed the new resources"
                         : "mig-manager did not answer in time (state \"" + state +
                               "\"); previous config \"" + intent->previous + "\" restored",
                 !applied, true, now, report);
      return false;
    }
    return true;
  }
  if (allocatableReady) {
    finishNode(name, *intent, "success",
               fmt::format("device-plugin config {} active; allocatable shows {}", intent->label,
                           json(intent->expect).dump()),
               false, false, now, report);
    return false;
  }
  if (since > options_.allocatableTimeout) {
    finishNode(name, *intent, "timeout",
               "allocatable never showed the new replicas; previous device-plugin config "
               "restored",
               true, true, now, report);
    return false;
  }
  return true;
}

bool KubeActuator::continueWithTimeSlicing(const std::string& name, const NodeIntent& mig,
                                           TimePoint now, ActuationReport& report) {
  NodeIntent next;
  next.plan = mig.plan;
  next.kind = NodeOpKind::kTimeSlicing;
  next.label = mig.then->label;
  next.config = mig.then->config;
  next.expect = mig.then->expect;
  next.started = now;
  auto r = patchWithRetry(
      *client_, nodeRef(name),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        auto current = partition::readNode(object);
        if (!current) return current.status();
        if (decodeNodeIntent(current->meta.annotation(k8s::kIntentAnnotation)) != mig)
          return noChange();
        next.previous = current->meta.label(k8s::kDevicePluginConfigLabel);
        json patch{
            {"metadata",
             {{"annotations", {{std::string(k8s::kIntentAnnotation), encodeNodeIntent(next)}}}}}};
        untaintInto(patch, *current);  // the MIG step is over; time-slicing destroys no pod
        return std::optional<kube::Object>(patch);
      });
  if (!r) {
    degraded_.failed("node_intent", name,
                     "could not record the time-slicing step: " + r.status().message());
    return true;
  }
  degraded_.cleared("node_intent", name);
  if (!r->changed) return true;  // someone moved the intent on: the next pass reads it
  report.outcomes.push_back({"mig", "success"});
  const auto target = EventTarget::node(name, uidOf(r->object));
  events_->record(target, false, "MigReconfigureSucceeded",
                  fmt::format("plan {}: MIG config {} applied and allocatable shows {}; "
                              "time-slicing {} -> {} follows",
                              mig.plan, mig.label, json(mig.expect).dump(),
                              next.previous.empty() ? "(none)" : next.previous, next.label));
  events_->record(target, false, "TimeSlicingPlanned",
                  fmt::format("plan {}: device-plugin config {} -> {}; expecting allocatable {}",
                              mig.plan, next.previous, next.label, json(next.expect).dump()));
  return advanceNode(name, now, report);
}

void KubeActuator::finishNode(const std::string& name, const NodeIntent& intent,
                              const std::string& result, const std::string& message, bool revert,
                              bool backoff, TimePoint now, ActuationReport& report) {
  NodeOutcome outcome{intent.plan, intent.kind, result, message, now};
  if (result == "success") {
    report.leverSeconds.push_back(
        {leverOf(intent.kind), name, std::chrono::duration<double>(now - intent.started).count()});
  }
  std::vector<std::string> repaired;
  auto r = patchWithRetry(
      *client_, nodeRef(name),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        repaired.clear();
        auto current = partition::readNode(object);
        if (!current) return current.status();
        auto ours = decodeNodeIntent(current->meta.annotation(k8s::kIntentAnnotation));
        if (!ours || ours->plan != intent.plan) return noChange();
        json labels = json::object();
        if (revert && current->meta.label(intent.labelKey()) == intent.label) {
          labels[std::string(intent.labelKey())] =
              intent.previous.empty() ? json(nullptr) : json(intent.previous);
        }
        if (intent.kind == NodeOpKind::kMig && result != "success") {
          for (const auto& [key, value] : current->meta.labels) {
            if (key.rfind(k8s::kDeployLabelPrefix, 0) == 0 && value == kPausedForMigChange &&
                current->meta.label(k8s::kMigConfigStateLabel) != "pending") {
              labels[key] = "true";
              repaired.push_back(key);
            }
          }
        }
        json annotations{{std::string(k8s::kIntentAnnotation), nullptr},
                         {std::string(k8s::kOutcomeAnnotation), encodeNodeOutcome(outcome)}};
        if (backoff) {
          annotations[std::string(k8s::kBackoffAnnotation)] =
              core::formatRfc3339(now + options_.failureBackoff);
        }
        json patch{{"metadata", {{"annotations", annotations}}}};
        if (!labels.empty()) patch["metadata"]["labels"] = labels;
        untaintInto(patch, *current);
        return std::optional<kube::Object>(patch);
      });
  if (!r) {
    degraded_.failed("node_outcome", name,
                     fmt::format("recording outcome {} failed: {}", result, r.status().message()));
    return;
  }
  degraded_.cleared("node_outcome", name);
  startedNodes_.erase(name);
  report.outcomes.push_back({std::string(nodeOpKindName(intent.kind)), result});
  const auto target = EventTarget::node(name, uidOf(r->object));
  const bool ok = result == "success";
  std::string reason = opTitle(intent.kind) + (ok ? "Succeeded" : "Failed");
  if (result == "timeout") reason = opTitle(intent.kind) + "TimedOut";
  if (result == "aborted") reason = opTitle(intent.kind) + "Aborted";
  events_->record(target, !ok, reason, fmt::format("plan {}: {}", intent.plan, message));
  if (!repaired.empty()) {
    events_->record(target, true, "OperandsUnpaused",
                    fmt::format("operand labels left paused after the failed MIG change set back "
                                "to \"true\": {}",
                                fmt::join(repaired, ", ")));
  }
}

}  // namespace gpuscale::reconciler
