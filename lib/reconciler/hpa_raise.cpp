// The HPA half of the actuator (hpa_raise.h): intents in the state store, promise cuts, raises
// once the partitions are allocatable, and lowers.
#include "gpuscale/reconciler/hpa_raise.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "actuator_internal.h"
#include "ceiling_holder.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/reconciler/optimistic_write.h"
#include "gpuscale/reconciler/published_devices.h"

namespace gpuscale::reconciler {

using actuator_detail::hpaRef;
using actuator_detail::noChange;
using nlohmann::json;

namespace {

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
  // Whole groups only (ScaleTarget::podsPerReplica): a replica runs when all its pods do.
  const int group = demand.target != nullptr ? std::max(1, demand.target->podsPerReplica) : 1;
  return total / group;
}

HpaRaise::HpaRaise(std::shared_ptr<kube::KubeClient> client, std::shared_ptr<EventRecorder> events,
                   std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)), events_(std::move(events)), degraded_(std::move(metrics)) {}

bool HpaRaise::recordIntent(const partition::SetMaxReplicas& change, const HpaIntent& intent,
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
        demandEventTarget(change.ns, change.name), false, "PartitionsRequested",
        fmt::format("plan {}: held at its GPU partition ceiling; changing partitions "
                    "on {} to raise maxReplicas {} -> {}",
                    intent.plan, fmt::join(intent.nodes, ", "), intent.from, intent.to));
  }
  return true;
}

void HpaRaise::cutPromise(const partition::PromiseCut& cut, const ClusterState& state) {
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
    events_->record(demandEventTarget(cut.ns, cut.name), false, "PromiseReduced",
                    fmt::format("plan {}: capacity still only promised is shared with an HPA of "
                                "higher priority: the raise in flight now goes to maxReplicas {} "
                                "instead of {}",
                                before->plan, std::max(cut.to, before->from), before->to));
  }
}

bool HpaRaise::advance(const std::string& ns, const std::string& name, const ClusterState& state,
                       TimePoint now, ActuationReport& report) {
  auto hpa = getDemandOwner(*client_, ns, name);
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
      failed.push_back(n + " (" + std::string(outcomeName(outcome->result)) + ")");
    }
  }
  if (!failed.empty()) {
    events_->record(
        demandEventTarget(ns, name), true, "PartitionChangeIncomplete",
        fmt::format("plan {}: no new capacity from {}", intent->plan, fmt::join(failed, ", ")));
  }
  raise(ns, name, intent->from, intent->to, intent->plan, state, now, report);
  return false;
}

bool HpaRaise::raise(const std::string& ns, const std::string& name, int from, int to,
                     const std::string& plan, const ClusterState& state, TimePoint now,
                     ActuationReport& report) {
  const auto* demand = findDemand(state, ns, name);
  int capacity = 0;
  bool draNodes = false, pluginNodes = false;  // what the capacity was read from
  if (demand != nullptr && state.snapshot != nullptr) {
    // Fresh allocatable: the caches may not show yet what the node operations just read. On a
    // static DRA node, the devices its driver publishes now (a reshape's new devices exist once
    // the slices are republished); a partitionable one is never reshaped: its cached capacity.
    partition::ClusterSnapshot fresh = *state.snapshot;
    for (std::size_t i : demand->eligibleNodes) {
      auto& node = fresh.nodes[i];
      (node.dra() ? draNodes : pluginNodes) = true;
      if (node.capacityModel == partition::CapacityModel::kDraPartitionable) continue;
      if (node.dra()) {
        auto published = publishedDevices(*client_, node.name);
        node.allocatable[demand->resource] = 0;
        if (published && *published) {
          auto it = (*published)->devices.find(demand->resource);
          if (it != (*published)->devices.end()) node.allocatable[demand->resource] = it->second;
        }
        continue;
      }
      auto read = actuator_detail::getNode(*client_, node.name);
      if (!read) continue;
      auto it = read->allocatable.find(demand->resource);
      node.allocatable[demand->resource] = it == read->allocatable.end() ? 0 : it->second;
    }
    capacity = allocatableCeiling(*demand, fresh);
  }
  const std::string_view holds = !draNodes     ? "allocatable holds"
                                 : pluginNodes ? "allocatable and the published devices hold"
                                               : "the published devices hold";
  const auto target = demandEventTarget(ns, name);
  auto failed = [&](const std::string& message) {
    report.outcomes.push_back({ActionKind::kMaxReplicas, Outcome::kError});
    degraded_.failed("max_replicas", ns + "/" + name, message);
    return false;
  };
  auto read = getDemandOwner(*client_, ns, name);
  if (!read) return failed("raising maxReplicas failed: " + read.status().message());
  if (state.store == nullptr) return failed("raising maxReplicas failed: no state store");
  const std::string uid = read->uid;
  const CeilingRef holder = ceilingRefOf(*read);
  auto record = state.store->get(ns, name, uid);
  std::optional<HpaIntent> started = record ? record->intent : std::nullopt;
  if (started && started->plan != plan) return false;  // another plan owns it now
  const int wanted = std::min(to, capacity);
  int before = read->maxReplicas;
  if (holder.holder == CeilingHolder::kScaledObject) {
    auto current = readCeiling(holder);
    if (!current) return failed("raising maxReplicas failed: " + current.status().message());
    before = *current;
  }
  // The state is recorded before the ceiling changes: a change that cannot be recorded (the store
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
  HpaStatus status{capacity, "none", "", now};
  auto r = patchWithRetry(
      *client_, holder.ref,
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        raisedTo = 0;
        auto value = holder.read(object);
        if (!value) return value.status();
        if (!*value) return noChange();  // recreated meanwhile
        const int current = **value;
        json patch = json::object();
        if (wanted > current && wanted > before) {
          raisedTo = wanted;
          patch = holder.patch(wanted);
          status.lastAction = fmt::format("{} {} -> {}", holder.describe(), current, wanted);
          status.reason = fmt::format("plan {}: {} {} replicas", plan, holds, capacity);
        } else {
          status.lastAction = holder.describe() + " unchanged";
          status.reason = fmt::format("plan {}: {} {} replicas, not more than {}", plan, holds,
                                      capacity, current);
        }
        if (raisedTo == 0 && (!started || !holder.annotatesInPatch())) return noChange();
        if (holder.annotatesInPatch()) patch["metadata"] = statusAnnotationMetadata(status);
        return std::optional<kube::Object>(patch);
      });
  if (!r) return failed("raising maxReplicas failed: " + r.status().message());
  const bool written = r->changed;
  degraded_.cleared("max_replicas", ns + "/" + name);
  if (raisedTo > 0) {
    report.outcomes.push_back({ActionKind::kMaxReplicas, Outcome::kSucceeded});
    if (started) {
      report.ceilingToCapacitySeconds.push_back(
          std::chrono::duration<double>(now - started->started).count());
    }
    events_->record(target, false, "MaxReplicasRaised",
                    fmt::format("plan {}: {} {} -> {} (planned {}; {} {} replicas)", plan,
                                holder.describe(), from, raisedTo, to, holds, capacity));
  } else if (written) {
    report.outcomes.push_back({ActionKind::kMaxReplicas, Outcome::kFailed});
    events_->record(
        target, true, "MaxReplicasUnchanged",
        fmt::format("plan {}: {} {} replicas; {} stays", plan, holds, capacity, holder.describe()));
  }
  return raisedTo > 0;
}

void HpaRaise::lower(const partition::SetMaxReplicas& change, const ClusterState& state,
                     TimePoint now, ActuationReport& report) {
  // Lowering only follows a raise recorded in the store (the planner gives back only what it
  // has an original maxReplicas for), so this updates an existing entry and never grows it.
  if (state.store == nullptr) return;
  auto hpa = getDemandOwner(*client_, change.ns, change.name);
  if (!hpa) {
    if (!k8s::isNotFound(hpa.status())) {
      report.outcomes.push_back({ActionKind::kMaxReplicas, Outcome::kError});
    }
    return;
  }
  const CeilingRef holder = ceilingRefOf(*hpa);
  int lowered = 0;
  HpaStatus status{0, "", "demand fell", now};
  auto r = patchWithRetry(
      *client_, holder.ref,
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        lowered = 0;
        auto value = holder.read(object);
        if (!value) return value.status();
        if (!*value) return noChange();
        // The HPA's replicas from the object itself when it holds its own ceiling; a request
        // gives back down to what it asks for (its grant is only a promise).
        partition::HpaState live = *hpa;
        if (holder.holder == CeilingHolder::kHpa) {
          auto fresh = partition::readHpa(object);
          if (!fresh) return fresh.status();
          live = std::move(*fresh);
        } else if (holder.holder == CeilingHolder::kCapacityRequest) {
          live.currentReplicas = live.minReplicas = 0;
        }
        const int current = **value;
        const int target = std::max({change.to, live.currentReplicas, live.minReplicas});
        if (current != change.from || target >= current) return noChange();  // stale plan
        lowered = target;
        status.ceiling = target;
        status.lastAction = fmt::format("{} {} -> {}", holder.describe(), current, target);
        json patch = holder.patch(target);
        if (holder.annotatesInPatch()) patch["metadata"] = statusAnnotationMetadata(status);
        return std::optional<kube::Object>(patch);
      });
  if (!r) {
    report.outcomes.push_back({ActionKind::kMaxReplicas, Outcome::kError});
    return;
  }
  if (lowered == 0) return;
  auto recorded = state.store->update(change.ns, change.name, hpa->uid, [&](HpaRecord& record) {
    record.lastChange = now;
    if (record.originalMaxReplicas == lowered) record.originalMaxReplicas.reset();
  });
  if (!recorded) {
    degraded_.failed("hpa_state", change.ns + "/" + change.name,
                     "recording the lowered maxReplicas failed: " + recorded.status().message());
  } else {
    degraded_.cleared("hpa_state", change.ns + "/" + change.name);
  }
  report.outcomes.push_back({ActionKind::kMaxReplicas, Outcome::kSucceeded});
  events_->record(demandEventTarget(change.ns, change.name), false, "MaxReplicasLowered",
                  fmt::format("demand fell: {} {} -> {}", holder.describe(), change.from, lowered));
}

core::Result<int> HpaRaise::readCeiling(const CeilingRef& holder) {
  auto object = client_->get(holder.ref);
  if (!object) return object.status();
  auto value = holder.read(*object);
  if (!value) return value.status();
  if (!*value) {
    return core::Status(409, "Conflict",
                        holder.describe() + ": not the object the HPA's owner reference names");
  }
  return **value;
}

}  // namespace gpuscale::reconciler
