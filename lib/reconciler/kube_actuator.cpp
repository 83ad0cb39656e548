// The plan and HPA half of KubeActuator: turn a plan into node operations and HPA intents, and
// raise maxReplicas once the capacity is real.
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actuator_internal.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/resource_names.h"
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

namespace {

std::vector<partition::MigGpuSetting> settingsOf(const partition::NodeState& node) {
  std::vector<partition::MigGpuSetting> out;
  for (const auto& g : node.gpus) out.push_back(g.setting);
  return out;
}

// Every GPU's setting once the MIG change `a` is applied.
std::vector<partition::MigGpuSetting> settingsAfter(const partition::MigReconfigure& a,
                                                    const partition::NodeState& node) {
  auto settings = settingsOf(node);
  for (const auto& g : a.gpus) {
    if (g.index >= 0 && static_cast<std::size_t>(g.index) < settings.size()) {
      settings[g.index] = {g.toMigEnabled, g.to};
    }
  }
  return settings;
}

KubeActuator::NodeWork migWork(const partition::MigReconfigure& a,
                               const partition::NodeState& node) {
  KubeActuator::NodeWork w;
  w.node = a.node;
  w.intent.kind = NodeOpKind::kMig;
  w.intent.label = a.configName;
  partition::MigPartedConfig file;
  file.configs[a.configName] = a.entries;
  w.intent.config = partition::emitMigPartedConfig(file);
  // A MIG mode change resets every GPU of the node: every one of them must be idle.
  if (a.switchesMigMode()) {
    for (const auto& g : node.gpus) w.intent.gpus.push_back(g.index);
  } else {
    for (const auto& g : a.gpus) w.intent.gpus.push_back(g.index);
  }
  // The device plugin shares the new partitions as its current config says.
  const partition::SharingConfig* sharing =
      node.devicePluginConfig && node.devicePluginConfig->timeSlicing
          ? &*node.devicePluginConfig->timeSlicing
          : nullptr;
  if (auto exposed =
          partition::exposedResources(settingsAfter(a, node), node.migStrategy, sharing)) {
    for (const auto& [res, n] : *exposed) w.intent.expect[res] = n;
  }
  return w;
}

// `devices`: the physical devices behind each resource when the change applies (after a MIG
// change of the same plan, the partitions it creates).
KubeActuator::NodeWork timeSlicingWork(const std::vector<const partition::TimeSlicingChange*>& cs,
                                       const partition::NodeState& node,
                                       const partition::ResourceCounts& devices) {
  KubeActuator::NodeWork w;
  w.node = node.name;
  partition::DevicePluginConfig config;
  if (node.devicePluginConfig) {
    config = *node.devicePluginConfig;
  } else {
    config.migStrategy = node.migStrategy;
  }
  // A node shares one way: the planner changes all of a node's resources in one mode.
  const partition::SharingMode mode =
      cs.empty() ? partition::SharingMode::kTimeSlicing : cs.front()->mode;
  w.intent.kind =
      mode == partition::SharingMode::kMps ? NodeOpKind::kMps : NodeOpKind::kTimeSlicing;
  for (const auto* c : cs)
    config = partition::withSharingReplicas(config, mode, c->resource, c->replicas);
  const partition::SharingConfig* sharing = partition::sharingOf(config, mode);
  const bool rename = sharing != nullptr && sharing->renameByDefault;
  for (const auto* c : cs) {
    auto n = devices.find(c->resource);
    if (n == devices.end()) continue;
    std::string name = c->replicas > 1 && rename ? c->resource + ".shared" : c->resource;
    w.intent.expect[name] = n->second * c->replicas;
  }
  w.intent.config = partition::emitDevicePluginConfig(config);
  w.intent.label = partition::ownedConfigName(node.name, w.intent.config);
  return w;
}

}  // namespace

std::vector<KubeActuator::NodeWork> nodeWorkFor(const partition::Plan& plan,
                                                const partition::ClusterSnapshot& snapshot) {
  std::map<std::string, const partition::MigReconfigure*> mig;
  std::map<std::string, std::vector<const partition::TimeSlicingChange*>> slicing;
  for (const auto& action : plan.actions) {
    if (const auto* m = std::get_if<partition::MigReconfigure>(&action)) mig[m->node] = m;
    if (const auto* t = std::get_if<partition::TimeSlicingChange>(&action)) {
      slicing[t->node].push_back(t);
    }
  }
  std::vector<KubeActuator::NodeWork> out;
  for (const auto& [name, m] : mig) {
    const auto* node = snapshot.node(name);
    if (node == nullptr) continue;
    KubeActuator::NodeWork w = migWork(*m, *node);
    if (auto it = slicing.find(name); it != slicing.end()) {
      // Replicas for partitions the MIG change creates: applied once they exist, in the same
      // operation, so the HPA waits for both.
      auto exposed =
          partition::exposedResources(settingsAfter(*m, *node), node->migStrategy, nullptr);
      partition::ResourceCounts devices;
      if (exposed) devices.insert(exposed->begin(), exposed->end());
      auto then = timeSlicingWork(it->second, *node, devices).intent;
      w.intent.then = TimeSlicingFollowUp{then.label, then.config, then.expect};
    }
    out.push_back(std::move(w));
  }
  for (const auto& [name, changes] : slicing) {
    if (mig.contains(name)) continue;
    if (const auto* node = snapshot.node(name)) {
      out.push_back(timeSlicingWork(changes, *node, node->devices));
    }
  }
  return out;
}

std::int64_t allocatableOf(const partition::NodeObject& node, const std::string& resource) {
  auto it = node.allocatable.find(resource);
  return it == node.allocatable.end() ? 0 : it->second;
}

bool allocatableMatches(const partition::NodeObject& node,
                        const std::map<std::string, std::int64_t>& want) {
  for (const auto& [res, n] : want) {
    if (allocatableOf(node, res) != n) return false;
  }
  return true;
}

}  // namespace actuator_detail

using actuator_detail::hpaRef;
using nlohmann::json;

namespace {

core::Result<std::optional<kube::Object>> noChange() { return std::optional<kube::Object>{}; }

const partition::WorkloadDemand* findDemand(const ClusterState& state, const std::string& ns,
                                            const std::string& name) {
  if (state.workloads == nullptr) return nullptr;
  for (const auto& d : *state.workloads) {
    if (d.ns == ns && d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace

int allocatableCeiling(const partition::WorkloadDemand& demand,
                       const partition::ClusterSnapshot& snapshot) {
  int total = 0;
  for (std::size_t i : demand.eligibleNodes) {
    const auto& node = snapshot.nodes[i];
    auto a = node.allocatable.find(demand.resource);
    auto u = node.used.find(demand.resource);
    total += partition::podsFitting(demand, i, a == node.allocatable.end() ? 0 : a->second,
                                    u == node.used.end() ? 0 : u->second);
  }
  return total;
}

KubeActuator::KubeActuator(std::shared_ptr<kube::KubeClient> client,
                           std::shared_ptr<EventRecorder> events,
                           std::shared_ptr<GpuPodMapping> gpuPods, ActuatorOptions options,
                           std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)),
      events_(std::move(events)),
      gpuPods_(std::move(gpuPods)),
      options_(std::move(options)),
      degraded_(std::move(metrics)) {}

ActuationReport KubeActuator::apply(const partition::Plan& plan, const ClusterState& state,
                                    TimePoint now) {
  ActuationReport report;
  std::set<std::string> nodes = state.nodesWithIntent;
  nodes.insert(startedNodes_.begin(), startedNodes_.end());
  int inFlight = 0;
  for (const auto& n : nodes) inFlight += advanceNode(n, now, report) ? 1 : 0;

  auto hpas = state.hpasWithIntent;
  hpas.insert(startedHpas_.begin(), startedHpas_.end());
  // Before the raises in flight advance: a raise that completes now goes to the cut target.
  for (const auto& cut : plan.promiseCuts) cutPromise(cut, state);
  for (const auto& [ns, name] : hpas) {
    if (!advanceHpa(ns, name, state, now, report)) startedHpas_.erase({ns, name});
  }

  std::vector<const partition::SetMaxReplicas*> raises;
  // Each HPA change is recorded in the state store first; without one, none is made.
  for (const auto& action : plan.actions) {
    const auto* m = std::get_if<partition::SetMaxReplicas>(&action);
    if (m == nullptr || hpas.contains({m->ns, m->name})) continue;
    if (m->to < m->from) {
      lowerMaxReplicas(*m, state, now, report);
    } else if (m->to > m->from) {
      raises.push_back(m);
    }
  }

  auto work = actuator_detail::nodeWorkFor(plan, *state.snapshot);
  std::erase_if(work, [&](const NodeWork& w) { return nodes.contains(w.node); });
  const std::string planId = fmt::format("{}-{}", core::formatRfc3339(now), ++planCounter_);
  if (work.empty()) {
    for (const auto* m : raises) {
      raiseMaxReplicas(m->ns, m->name, m->from, m->to, planId, state, now, report);
    }
    report.nodesInFlight = inFlight;
    return report;
  }
  const int budget = std::max(0, options_.maxNodesInFlight - inFlight);
  if (static_cast<int>(work.size()) > budget) work.resize(budget);
  if (work.empty()) {
    const std::string wait = fmt::format("plan waits: {} node(s) in flight (limit {})", inFlight,
                                         options_.maxNodesInFlight);
    if (wait != waitingLogged_) spdlog::info("{}", wait);
    waitingLogged_ = wait;
    report.nodesInFlight = inFlight;
    return report;
  }
  waitingLogged_.clear();
  HpaIntent hpaIntent{planId, 0, 0, {}, now};
  for (const auto& w : work) hpaIntent.nodes.push_back(w.node);
  bool recorded = raises.empty();  // node work without a raise (giving isolation back)
  for (const auto* m : raises) {
    hpaIntent.from = m->from;
    hpaIntent.to = m->to;
    if (writeHpaIntent(*m, hpaIntent, state)) {
      startedHpas_.insert({m->ns, m->name});
      recorded = true;
    }
  }
  // Partitions change only for an HPA whose intent is recorded (a full state store refuses it).
  if (!recorded) {
    report.nodesInFlight = inFlight;
    return report;
  }
  for (const auto& w : work) inFlight += startNode(w, planId, now, report) ? 1 : 0;
  report.nodesInFlight = inFlight;
  return report;
}

bool KubeActuator::writeHpaIntent(const partition::SetMaxReplicas& change, const HpaIntent& intent,
                                  const ClusterState& state) {
  const std::string object = change.ns + "/" + change.name;
  const partition::HpaState* hpa =
      state.snapshot != nullptr ? state.snapshot->hpa(change.ns, change.name) : nullptr;
  if (state.store == nullptr || hpa == nullptr) {
    degraded_.failed("hpa_intent", object, "could not record intent: no state store");
    return false;
  }
  auto r = state.store->update(change.ns, change.name, hpa->uid, [&](HpaRecord& record) {
    if (!record.intent) record.intent = intent;
  });
  if (!r) {
    degraded_.failed("hpa_intent", object, "could not record intent: " + r.status().message());
    return false;
  }
  degraded_.cleared("hpa_intent", object);
  if (*r) {
    events_->record(
        EventTarget::hpa(change.ns, change.name), false, "PartitionsRequested",
        fmt::format("plan {}: held at its GPU partition ceiling; changing partitions "
                    "on {} to raise maxReplicas {} -> {}",
                    intent.plan, fmt::join(intent.nodes, ", "), intent.from, intent.to));
  }
  return true;
}

void KubeActuator::cutPromise(const partition::PromiseCut& cut, const ClusterState& state) {
  const partition::HpaState* hpa =
      state.snapshot != nullptr ? state.snapshot->hpa(cut.ns, cut.name) : nullptr;
  if (state.store == nullptr || hpa == nullptr) return;
  std::optional<HpaIntent> before;
  auto r = state.store->update(cut.ns, cut.name, hpa->uid, [&](HpaRecord& record) {
    if (!record.intent || record.intent->to <= cut.to) return;
    before = record.intent;
    record.intent->to = std::max(cut.to, record.intent->from);
  });
  const std::string object = cut.ns + "/" + cut.name;
  if (!r) {
    degraded_.failed("hpa_intent", object, "could not cut the promise: " + r.status().message());
    return;
  }
  degraded_.cleared("hpa_intent", object);
  if (*r && before) {
    events_->record(EventTarget::hpa(cut.ns, cut.name), false, "PromiseReduced",
                    fmt::format("plan {}: capacity still only promised is shared with an HPA of "
                                "higher priority: the raise in flight now goes to maxReplicas {} "
                                "instead of {}",
                                before->plan, std::max(cut.to, before->from), before->to));
  }
}

bool KubeActuator::advanceHpa(const std::string& ns, const std::string& name,
                              const ClusterState& state, TimePoint now, ActuationReport& report) {
  auto hpa = actuator_detail::getHpa(*client_, ns, name);
  if (!hpa) return !k8s::isNotFound(hpa.status());
  if (state.store == nullptr) return false;
  auto record = state.store->get(ns, name, hpa->uid);
  if (!record || !record->intent) return false;
  const auto& intent = record->intent;
  std::vector<std::string> failed;
  for (const auto& n : intent->nodes) {
    // Only nodes the snapshot knows are read: an intent cannot send the reconciler elsewhere.
    if (state.snapshot == nullptr || state.snapshot->node(n) == nullptr) {
      failed.push_back(n + " (gone)");
      continue;
    }
    auto node = actuator_detail::getNode(*client_, n);
    if (!node) {
      if (!k8s::isNotFound(node.status())) return true;
      failed.push_back(n + " (gone)");
      continue;
    }
    auto pending = decodeNodeIntent(node->meta.annotation(k8s::kIntentAnnotation));
    if (pending && pending->plan == intent->plan) return true;  // still in flight
    auto outcome = decodeNodeOutcome(node->meta.annotation(k8s::kOutcomeAnnotation));
    if (!outcome || outcome->plan != intent->plan) {
      failed.push_back(n + " (unknown)");
    } else if (!outcome->succeeded()) {
      failed.push_back(n + " (" + outcome->result + ")");
    }
  }
  if (!failed.empty()) {
    events_->record(
        EventTarget::hpa(ns, name), true, "PartitionChangeIncomplete",
        fmt::format("plan {}: no new capacity from {}", intent->plan, fmt::join(failed, ", ")));
  }
  raiseMaxReplicas(ns, name, intent->from, intent->to, intent->plan, state, now, report);
  return false;
}

bool KubeActuator::raiseMaxReplicas(const std::string& ns, const std::string& name, int from,
                                    int to, const std::string& plan, const ClusterState& state,
                                    TimePoint now, ActuationReport& report) {
  const auto* demand = findDemand(state, ns, name);
  int capacity = 0;
  if (demand != nullptr && state.snapshot != nullptr) {
    // Fresh allocatable: the caches may not show yet what advanceNode just read.
    partition::ClusterSnapshot fresh = *state.snapshot;
    for (std::size_t i : demand->eligibleNodes) {
      auto node = actuator_detail::getNode(*client_, fresh.nodes[i].name);
      if (node) {
        fresh.nodes[i].allocatable[demand->resource] =
            actuator_detail::allocatableOf(*node, demand->resource);
      }
    }
    capacity = allocatableCeiling(*demand, fresh);
  }
  const auto target = EventTarget::hpa(ns, name);
  auto failed = [&](const std::string& message) {
    report.outcomes.push_back({"maxReplicas", "error"});
    degraded_.failed("max_replicas", ns + "/" + name, message);
    return false;
  };
  auto read = actuator_detail::getHpa(*client_, ns, name);
  if (!read) return failed("raising maxReplicas failed: " + read.status().message());
  if (state.store == nullptr) return failed("raising maxReplicas failed: no state store");
  const std::string uid = read->uid;
  auto record = state.store->get(ns, name, uid);
  std::optional<HpaIntent> started = record ? record->intent : std::nullopt;
  if (started && started->plan != plan) return false;  // another plan owns it now
  const int wanted = std::min(to, capacity);
  const int before = read->maxReplicas;
  // The state is recorded before the HPA changes: a change that cannot be recorded (the store
  // is full or unreachable) is not made. The intent ends here either way.
  if (wanted > before || started) {
    auto recorded = state.store->update(ns, name, uid, [&](HpaRecord& r) {
      r.intent.reset();
      if (wanted > before) {
        r.lastChange = now;
        if (!r.originalMaxReplicas) r.originalMaxReplicas = before;
      }
    });
    if (!recorded) return failed("recording the raise failed: " + recorded.status().message());
  }
  int raisedTo = 0;
  auto r = patchWithRetry(
      *client_, hpaRef(ns, name),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        raisedTo = 0;
        auto hpa = partition::readHpa(object);
        if (!hpa) return hpa.status();
        if (hpa->uid != uid) return noChange();  // recreated meanwhile
        const int current = hpa->maxReplicas;
        json annotations = json::object();
        json patch = json::object();
        HpaStatus status{capacity, "none", "", now};
        if (wanted > current && wanted > before) {
          raisedTo = wanted;
          patch["spec"] = {{"maxReplicas", wanted}};
          status.lastAction = fmt::format("maxReplicas {} -> {}", current, wanted);
          status.reason = fmt::format("plan {}: allocatable holds {} pods", plan, capacity);
        } else {
          status.lastAction = "maxReplicas unchanged";
          status.reason = fmt::format("plan {}: allocatable holds {} pods, not more than {}", plan,
                                      capacity, current);
        }
        annotations[std::string(k8s::kStatusAnnotation)] = encodeHpaStatus(status);
        if (!started && raisedTo == 0) return noChange();
        patch["metadata"] = {{"annotations", annotations}};
        return std::optional<kube::Object>(patch);
      });
  if (!r) return failed("raising maxReplicas failed: " + r.status().message());
  degraded_.cleared("max_replicas", ns + "/" + name);
  if (raisedTo > 0) {
    report.outcomes.push_back({"maxReplicas", "success"});
    if (started) {
      report.ceilingToCapacitySeconds.push_back(
          std::chrono::duration<double>(now - started->started).count());
    }
    events_->record(target, false, "MaxReplicasRaised",
                    fmt::format("plan {}: maxReplicas {} -> {} (planned {}; allocatable holds {} "
                                "pods)",
                                plan, from, raisedTo, to, capacity));
  } else if (r->changed) {
    report.outcomes.push_back({"maxReplicas", "failed"});
    events_->record(
        target, true, "MaxReplicasUnchanged",
        fmt::format("plan {}: allocatable holds {} pods; maxReplicas stays", plan, capacity));
  }
  return raisedTo > 0;
}

void KubeActuator::lowerMaxReplicas(const partition::SetMaxReplicas& change,
                                    const ClusterState& state, TimePoint now,
                                    ActuationReport& report) {
  // Lowering only follows a raise recorded in the store (the planner gives back only what it
  // has an original maxReplicas for), so this updates an existing entry and never grows it.
  if (state.store == nullptr) return;
  bool lowered = false;
  auto r = patchWithRetry(
      *client_, hpaRef(change.ns, change.name),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        lowered = false;
        auto hpa = partition::readHpa(object);
        if (!hpa) return hpa.status();
        const int current = hpa->maxReplicas;
        const int target = std::max({change.to, hpa->currentReplicas, hpa->minReplicas});
        if (current != change.from || target >= current) return noChange();  // stale plan
        lowered = true;
        json annotations = json::object();
        annotations[std::string(k8s::kStatusAnnotation)] = encodeHpaStatus(
            {target, fmt::format("maxReplicas {} -> {}", current, target), "demand fell", now});
        return std::optional<kube::Object>(json{{"spec", {{"maxReplicas", target}}},
                                                {"metadata", {{"annotations", annotations}}}});
      });
  if (!r) {
    report.outcomes.push_back({"maxReplicas", "error"});
    return;
  }
  auto after = partition::readHpa(r->object);
  if (lowered && after) {
    const int target = after->maxReplicas;
    auto recorded = state.store->update(change.ns, change.name, after->uid, [&](HpaRecord& record) {
      record.lastChange = now;
      if (record.originalMaxReplicas == target) record.originalMaxReplicas.reset();
    });
    if (!recorded) {
      degraded_.failed("hpa_state", change.ns + "/" + change.name,
                       "recording the lowered maxReplicas failed: " + recorded.status().message());
    } else {
      degraded_.cleared("hpa_state", change.ns + "/" + change.name);
    }
    report.outcomes.push_back({"maxReplicas", "success"});
    events_->record(EventTarget::hpa(change.ns, change.name), false, "MaxReplicasLowered",
                    fmt::format("demand fell: maxReplicas {} -> {}", change.from, target));
  }
}

}  // namespace gpuscale::reconciler
