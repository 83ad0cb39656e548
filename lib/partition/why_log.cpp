#include "why_log.h"

#include <chrono>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpuscale::partition {

std::optional<WhyReason> nodeUnchangeable(const NodeState& n, const Policy& policy, TimePoint now) {
  auto reason = [&](WhyCode code, std::string detail) {
    return WhyReason{code, n.name, std::nullopt, std::move(detail)};
  };
  if (n.hasIntent) {
    return reason(WhyCode::kNodeOperationInFlight,
                  "a gpuscale operation on the node has not finished (gpuscale.io/intent)");
  }
  if (n.backoffUntil && *n.backoffUntil > now) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(*n.backoffUntil - now);
    return reason(
        WhyCode::kNodeBackoff,
        fmt::format("an earlier operation failed{}; backing off for {}s more "
                    "(gpuscale.io/backoff-until)",
                    n.lastOutcome.empty() ? "" : " (" + n.lastOutcome + ")", left.count()));
  }
  if (n.inTransition) {
    return reason(WhyCode::kNodeMigTransition,
                  n.migConfigState.empty() || n.migConfigState == "success"
                      ? std::string("GPU operands are paused for a MIG change")
                      : fmt::format("nvidia.com/mig.config.state is {}", n.migConfigState));
  }
  if (!policy.selectsNode(n.labels)) {
    return reason(
        WhyCode::kNodeNotSelected,
        fmt::format("outside the nodeSelector of policy {}, or matched by its excludeNodes",
                    policy.name));
  }
  return std::nullopt;
}

WhyReason nodeNotReshapeable(const NodeState& n) {
  auto reason = [&](WhyCode code, std::string detail) {
    return WhyReason{code, n.name, Lever::kMigReshape, std::move(detail)};
  };
  if (n.model == nullptr) {
    return reason(WhyCode::kNotMigCapable,
                  fmt::format("no MIG-capable GPU model for product \"{}\"", n.product));
  }
  if (n.capacityModel == CapacityModel::kDraPartitionable) {
    return reason(WhyCode::kDraPartitionable,
                  "the DRA driver creates MIG devices when claims are allocated: nothing to "
                  "reshape, the free counters are the ceiling");
  }
  if (!n.migManaged()) {
    return reason(WhyCode::kMigNotManaged,
                  "no mig-manager reports nvidia.com/mig.config.state on this node: nothing would "
                  "apply a MIG config, so it is never reshaped (nor tainted)");
  }
  if (!n.geometryKnown) {
    return reason(
        WhyCode::kMigGeometryUnknown,
        fmt::format("the per-GPU MIG layout of config \"{}\" does not resolve", n.migConfig));
  }
  if (n.migStrategy == MigStrategy::kNone) {
    return reason(WhyCode::kMigDisabled, "MIG strategy none (MIG mode is never switched on here)");
  }
  return reason(WhyCode::kGpuPodsOnNode,
                "single strategy: every GPU changes at once, and the node holds GPU pods");
}

WhyReason noReshapeGain(const NodeState& n, int migGpus, int busy) {
  auto reason = [&](WhyCode code, std::string detail) {
    return WhyReason{code, n.name, Lever::kMigReshape, std::move(detail)};
  };
  if (migGpus == 0) {
    return reason(WhyCode::kMigDisabled,
                  "no GPU has MIG enabled, and none is idle to switch it on");
  }
  if (busy < migGpus) {
    return reason(WhyCode::kNoReshapeGain,
                  fmt::format("{} of {} MIG GPUs are idle, but no allowed geometry adds a pod",
                              migGpus - busy, migGpus));
  }
  return reason(
      WhyCode::kGpusBusy,
      n.gpuMapped
          ? fmt::format("every MIG GPU holds pods (per-GPU mapping, {} GPUs)", migGpus)
          : fmt::format("the node holds GPU pods and no per-GPU mapping answered for it, so every "
                        "GPU counts as busy ({} GPUs; node-level rule, --gpu-mapping=dcgm tells "
                        "them apart)",
                        migGpus));
}

WhyReason noTimeSlicingGain(const std::string& node, const std::string& base, int replicas,
                            int limit, const Policy& policy) {
  WhyCode code = WhyCode::kNoTimeSlicingGain;
  std::string_view which = "";
  if (replicas >= limit) {
    const bool memory = limit < policy.maxTimeSlicingReplicas;
    code = memory ? WhyCode::kMemoryLimit : WhyCode::kReplicaLimit;
    which =
        memory ? " (partition memory / timeSlicing.perPodGpuMemory)" : " (timeSlicing.maxReplicas)";
  }
  return {code, node, Lever::kTimeSlicing,
          fmt::format("{} replicas of {}; the limit is {}{}", replicas, base, limit, which)};
}

HpaWhy& WhyLog::of(const WorkloadDemand& d) {
  auto [it, added] = why_.try_emplace(&d);
  if (added) {
    HpaWhy& w = it->second;
    w.ns = d.ns;
    w.name = d.name;
    w.policy = d.policy->name;
    w.resource = d.resource;
    w.blocked = d.blocked;
    w.demand = blockReasonName(d.reason);
    w.maxReplicas = d.hpa->maxReplicas;
    w.ceiling = d.ceiling;
    w.wanted = d.wanted;
    if (!d.blocked) w.reasons.push_back({WhyCode::kNotBlocked, "", std::nullopt, d.notBlockedWhy});
  }
  return it->second;
}

void WhyLog::cooldown(const WorkloadDemand& d, TimePoint now) {
  const auto ago = std::chrono::duration_cast<std::chrono::seconds>(now - *d.hpa->lastChange);
  add(d, {WhyCode::kScaleUpCooldown, "", std::nullopt,
          fmt::format("changed {}s ago, cooldown.scaleUp is {}s", ago.count(),
                      d.policy->scaleUpCooldown.count())});
}

void WhyLog::aiming(const WorkloadDemand& d, int cap, int aim) {
  HpaWhy& w = of(d);
  w.cap = cap;
  w.aim = aim;
  if (d.wanted > cap) {
    w.reasons.push_back(
        {WhyCode::kAtPolicyCap, "", std::nullopt,
         fmt::format("the HPA wants {} but the policy caps maxReplicas at {}", d.wanted, cap)});
  }
  if (d.eligibleNodes.empty()) {
    w.reasons.push_back({WhyCode::kNoEligibleNodes, "", std::nullopt,
                         "no schedulable node matches the pods' nodeSelector"});
  }
}

void WhyLog::grown(const WorkloadDemand& d, int after, int need) {
  HpaWhy& w = of(d);
  w.after = after;
  if (need <= 0) return;
  std::vector<std::string_view> levers;
  for (Lever l : d.policy->levers) levers.push_back(leverName(l));
  w.reasons.push_back({WhyCode::kShortfall, "", std::nullopt,
                       fmt::format("aims at {} pods; with the levers [{}] the partitions hold {}",
                                   w.aim.value_or(0), fmt::join(levers, ", "), after)});
}

HpaWhy WhyLog::finish(const WorkloadDemand& d, const SetMaxReplicas* change,
                      const std::string& share) {
  HpaWhy w = of(d);
  if (!share.empty()) w.reasons.push_back({WhyCode::kShared, "", std::nullopt, share});
  if (change != nullptr) {
    w.newMaxReplicas = change->to;
    w.reasons.push_back({change->to > change->from ? WhyCode::kRaised : WhyCode::kLowered, "",
                         std::nullopt,
                         fmt::format("maxReplicas {} -> {}", change->from, change->to)});
  }
  return w;
}

}  // namespace gpuscale::partition
