#include "gpuscale/partition/planner.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "gpuscale/partition/contention.h"
#include "gpuscale/partition/resource_names.h"
#include "plan_builder.h"

namespace gpuscale::partition {
namespace detail {

PlanBuilder::PlanBuilder(const ClusterSnapshot& snapshot, TimePoint now)
    : snap_(snapshot), now_(now), table_(snapshot.nodes) {
  nodes_.resize(snap_.nodes.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    WorkingNode& w = nodes_[i];
    w.gpus.reserve(snap_.nodes[i].gpus.size());
    for (const auto& g : snap_.nodes[i].gpus) w.gpus.push_back(g.setting);
    w.reshaped.assign(w.gpus.size(), false);
  }
}

std::optional<Growth> PlanBuilder::grow(const WorkloadDemand& d) {
  const Policy& policy = *d.policy;
  if (const auto& last = d.hpa->lastChange; last && now_ - *last < policy.scaleUpCooldown) {
    notes_.push_back(fmt::format("{}/{}: within the scale-up cooldown, not changed", d.ns, d.name));
    why_.cooldown(d, now_);
    return std::nullopt;
  }
  // No pod fits anywhere yet (pinned to a product spelling no node has before the raise): the
  // HPA's own ceiling stands in for the partition count a factor multiplies.
  const int hardMax = policy.hardMaxFor(
      d.ceiling > 0 ? d.ceiling : d.hpa->originalMaxReplicas.value_or(d.hpa->maxReplicas));
  // Replicas are whole groups of podsPerReplica pods; the levers count pods.
  const int group = podsPerReplica(d);
  const int before = ceiling(d) / group;
  const int aim = std::min(d.wanted, hardMax);
  int need = aim - before;
  why_.aiming(d, hardMax, aim);
  if (need > 0 && waitsForMapping(d)) return std::nullopt;
  if (need > 0) {
    const int podsBefore = ceiling(d);
    const int gained = applyLevers(d, aim * group - podsBefore, podsBefore);
    need = std::max(0, aim - (podsBefore + gained) / group);
  }
  const int after = ceiling(d) / group;
  // An HPA may be raised past what it wants now (its load may grow); a request is granted at most
  // what it asks for.
  const int newMax = std::min({hardMax, after, d.hpa->capacityRequest ? aim : hardMax});
  if (newMax > d.hpa->maxReplicas) setMax(d, newMax);
  if (need > 0) {
    notes_.push_back(fmt::format("{}/{}: aims at {} pods of {}, partitions hold {} after this plan",
                                 d.ns, d.name, aim, d.resource, after));
  }
  why_.grown(d, after, need);
  return Growth{before, aim, after};
}

void PlanBuilder::shrink(const WorkloadDemand& d) {
  const Policy& policy = *d.policy;
  const bool request = d.hpa->capacityRequest != nullptr;
  // A request that asks for less gives the rest back at once: the grant is only a promise.
  if (request && d.hpa->maxReplicas > d.wanted) setMax(d, d.wanted);
  if (!d.hpa->originalMaxReplicas && !request) return;
  const int originalMax = d.hpa->originalMaxReplicas.value_or(0);
  // Hysteresis comes from the HPA's own scale-down stabilization (spec.replicas falls only after
  // it) and from this cooldown on gpuscale's last change, not from the HPA's lastScaleTime: an
  // HPA that keeps adjusting a few replicas at the base load would otherwise never get isolation
  // back.
  const auto& lastChange = d.hpa->lastChange;
  if (lastChange && now_ - *lastChange < policy.scaleDownCooldown) return;
  const int group = podsPerReplica(d);
  const int floorPods = std::max({d.wanted * group, d.target->specReplicas * group,
                                  d.hpa->minReplicas * group, d.runningPods});
  const ResourceKey k = keyOf(d.resource);
  const std::string& base = k.base;
  int current = ceiling(d);
  for (auto it = d.eligibleNodes.rbegin(); it != d.eligibleNodes.rend() && current > floorPods;
       ++it) {
    const std::size_t i = *it;
    if (!changeable(d, i) || !snap_.nodes[i].ownsDevicePluginConfig() ||
        nodes_[i].raised.count(base) || grantedNodes_.contains(i)) {
      continue;
    }
    const int r = replicas(i, k);
    const std::int64_t devices = deviceCount(i, k);
    if (r <= 1 || devices <= 0) continue;
    const std::int64_t used = usedOn(i, k);
    const int minReplicas = std::max<int>(1, static_cast<int>((used + devices - 1) / devices));
    const int before = podsOn(d, i, k);
    for (int r2 = minReplicas; r2 < r; ++r2) {
      if (!pinsHold(d, i, base, r2)) continue;  // lowering would rename the product away
      int after = podsFitting(d, i, devices * r2, used);
      if (current - (before - after) >= floorPods) {
        nodes_[i].replicas[base] = r2;
        current -= before - after;
        break;
      }
    }
  }
  if (policy.migRestore) restoreMig(d, floorPods);
  if (request) return;
  const int lowered = std::max({originalMax, d.target->specReplicas, d.hpa->minReplicas,
                                std::min(d.hpa->maxReplicas, ceiling(d) / group)});
  if (lowered < d.hpa->maxReplicas) setMax(d, lowered);
}

void PlanBuilder::markBurstNodes(const std::vector<WorkloadDemand>& workloads) {
  for (const auto& d : workloads) {
    if (d.blocked) burstNodes_.insert(d.eligibleNodes.begin(), d.eligibleNodes.end());
    if (d.hpa->capacityRequest && d.promisedPods > 0)
      grantedNodes_.insert(d.eligibleNodes.begin(), d.eligibleNodes.end());
  }
}

Plan PlanBuilder::finish(const std::vector<WorkloadDemand>& workloads) {
  Plan plan;
  for (const auto& d : workloads) {
    if (d.blocked) {
      std::string explain;
      if (d.reason == BlockReason::kAnticipated && d.forecast)
        explain = "predicted: " + d.forecast->why;
      if (auto it = shares_.find({d.ns, d.name}); it != shares_.end()) {
        explain += (explain.empty() ? "" : "; ") + ("shared: " + it->second);
      }
      plan.demands.push_back(
          {d.ns, d.name, d.resource, d.reason, d.ceiling, d.wanted, std::move(explain)});
    }
    plan.capacityAfter.push_back({d.ns, d.name, ceiling(d) / podsPerReplica(d)});
    const auto change = maxChanges_.find({d.ns, d.name});
    const auto share = shares_.find({d.ns, d.name});
    plan.why.push_back(why_.finish(d, change == maxChanges_.end() ? nullptr : &change->second,
                                   share == shares_.end() ? "" : share->second));
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (auto a = migAction(i)) plan.actions.emplace_back(std::move(*a));
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    for (const auto& [resource, r] : nodes_[i].replicas) {
      int from = snap_.nodes[i].replicasFor(resource);
      if (r != from) {
        plan.actions.emplace_back(
            TimeSlicingChange{snap_.nodes[i].name, resource, from, r, nodeSharing(i)});
      }
    }
  }
  for (const auto& [key, change] : maxChanges_) plan.actions.emplace_back(change);
  plan.promiseCuts = std::move(promiseCuts_);
  plan.notes = std::move(notes_);
  return plan;
}

PlanBuilder::ResourceKey PlanBuilder::keyOf(std::string_view resource) const {
  return {std::string(unsharedResourceName(resource)), table_.key(resource)};
}

int PlanBuilder::replicas(std::size_t i, const std::string& base) const {
  auto it = nodes_[i].replicas.find(base);
  return it != nodes_[i].replicas.end() ? it->second : snap_.nodes[i].replicasFor(base);
}

int PlanBuilder::replicas(std::size_t i, const ResourceKey& k) const {
  auto it = nodes_[i].replicas.find(k.base);
  return it != nodes_[i].replicas.end() ? it->second : table_.replicas(i, k.ids.base);
}

std::int64_t PlanBuilder::deviceCount(std::size_t i, const std::string& base) const {
  const ResourceCounts& devices = nodes_[i].devices ? *nodes_[i].devices : snap_.nodes[i].devices;
  auto it = devices.find(base);
  return it == devices.end() ? 0 : it->second;
}

std::int64_t PlanBuilder::deviceCount(std::size_t i, const ResourceKey& k) const {
  if (!nodes_[i].devices) return table_.devices(i, k.ids.base);
  auto it = nodes_[i].devices->find(k.base);
  return it == nodes_[i].devices->end() ? 0 : it->second;
}

std::int64_t PlanBuilder::usedOn(std::size_t i, const std::string& resource) const {
  auto it = snap_.nodes[i].used.find(resource);
  return it == snap_.nodes[i].used.end() ? 0 : it->second;
}

std::int64_t PlanBuilder::usedOn(std::size_t i, const ResourceKey& k) const {
  return table_.used(i, k.ids.resource);
}

int PlanBuilder::podsOn(const WorkloadDemand& d, std::size_t i) const {
  return podsOn(d, i, keyOf(d.resource));
}

int PlanBuilder::podsOn(const WorkloadDemand& d, std::size_t i, const ResourceKey& k) const {
  const int r = replicas(i, k);
  if (!pinsHold(d, i, k.base, r)) return 0;
  return podsFitting(d, i, deviceCount(i, k) * r, usedOn(i, k));
}

const std::vector<const PodState*>& PlanBuilder::activePodsOn(std::size_t i) const {
  static const std::vector<const PodState*> kNone;
  if (!podsByNode_) {
    podsByNode_.emplace();
    for (const PodState& pod : snap_.pods) {
      if (pod.active()) (*podsByNode_)[pod.nodeName].push_back(&pod);
    }
  }
  auto it = podsByNode_->find(snap_.nodes[i].name);
  return it == podsByNode_->end() ? kNone : it->second;
}

bool PlanBuilder::pinsHold(const WorkloadDemand& d, std::size_t i, const std::string& base,
                           int r) const {
  const NodeState& n = snap_.nodes[i];
  for (const ProductPin& pin : d.productPins) {
    auto label = n.labels.find(pin.key);
    if (label == n.labels.end()) return false;
    GpuProduct have = parseGpuProduct(label->second);
    const auto& gpus = nodes_[i].gpus;
    if (pin.resource == kGpuResource && n.migStrategy == MigStrategy::kSingle && !gpus.empty() &&
        gpus.front().geometry.size() == 1) {
      have.migProfile = gpus.front().geometry.begin()->first;
    }
    if (!pinHolds(pin, formatGpuProduct(have),
                  pin.resource == base ? r : replicas(i, pin.resource)))
      return false;
  }
  return true;
}

int PlanBuilder::ceiling(const WorkloadDemand& d) const {
  const ResourceKey k = keyOf(d.resource);
  int total = 0;
  for (std::size_t i : d.eligibleNodes) total += podsOn(d, i, k);
  return total;
}

int PlanBuilder::podsPerReplica(const WorkloadDemand& d) {
  return d.target != nullptr ? std::max(1, d.target->podsPerReplica) : 1;
}

bool PlanBuilder::changeable(const WorkloadDemand& d, std::size_t i) const {
  const NodeState& n = snap_.nodes[i];
  return !n.inTransition && d.policy->selectsNode(n.labels);
}

void PlanBuilder::because(const WorkloadDemand& d, std::size_t i, Lever lever, WhyCode code,
                          std::string detail) {
  why_.add(d, {code, snap_.nodes[i].name, lever, std::move(detail)});
}

WhyReason PlanBuilder::unchangeable(const WorkloadDemand& d, std::size_t i, Lever lever) const {
  WhyReason r = nodeUnchangeable(snap_.nodes[i], *d.policy, now_).value_or(WhyReason{});
  r.lever = lever;
  return r;
}

void PlanBuilder::setMax(const WorkloadDemand& d, int to) {
  maxChanges_[{d.ns, d.name}] = SetMaxReplicas{d.ns, d.name, d.hpa->maxReplicas, to};
}

}  // namespace detail

Plan planPartitions(const ClusterSnapshot& snapshot, const std::vector<WorkloadDemand>& workloads,
                    TimePoint now) {
  detail::PlanBuilder builder(snapshot, now);
  for (const auto& group : contentionGroups(workloads)) builder.growGroup(group);
  builder.markBurstNodes(workloads);
  for (const auto& d : workloads) {
    if (!d.blocked && !d.inFlight && !builder.promiseCut(d)) builder.shrink(d);
  }
  return builder.finish(workloads);
}

}  // namespace gpuscale::partition
