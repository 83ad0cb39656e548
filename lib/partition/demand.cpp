#include "gpuscale/partition/demand.h"

#include <algorithm>
#include <cmath>

#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition {
namespace {

// ceil() that ignores floating-point noise just above an integer (56.0000000001 -> 56).
int ceilReplicas(double x) { return static_cast<int>(std::ceil(x - 1e-9)); }

bool averagedOverCurrent(const HpaMetric& m) {
  return (m.type == "Object" || m.type == "External") && m.targetType == "AverageValue";
}

std::string chooseResource(const ScaleTarget& target, const std::vector<const PodState*>& pods) {
  for (const PodState* p : pods) {
    if (!p->insufficientResource.empty() && target.gpuRequests.count(p->insufficientResource) > 0) {
      return p->insufficientResource;
    }
  }
  return target.gpuRequests.empty() ? std::string() : target.gpuRequests.begin()->first;
}

bool nodeEligible(const NodeState& node, const ScaleTarget& target) {
  if (!node.schedulable) return false;
  return std::all_of(target.nodeSelector.begin(), target.nodeSelector.end(), [&](const auto& kv) {
    auto it = node.labels.find(kv.first);
    return it != node.labels.end() && it->second == kv.second;
  });
}

}  // namespace

int hpaWantedReplicas(const HpaState& hpa, int readyPods, double tolerance) {
  const int current = hpa.currentReplicas;
  const int ready = readyPods > 0 ? readyPods : current;
  int wanted = -1;
  for (const auto& m : hpa.metrics) {
    if (!m.current || m.target <= 0) continue;
    double ratio = *m.current / m.target;
    int proposal = current;
    if (std::fabs(1.0 - ratio) > tolerance) {
      proposal = ceilReplicas(ratio * (averagedOverCurrent(m) ? current : ready));
    }
    wanted = std::max(wanted, proposal);
  }
  return wanted < 0 ? current : wanted;
}

int podsFitting(const WorkloadDemand& d, std::size_t nodeIndex, std::int64_t capacity,
                std::int64_t usedOnNode) {
  auto own = d.ownUsage.find(nodeIndex);
  std::int64_t usedByOthers = usedOnNode - (own == d.ownUsage.end() ? 0 : own->second);
  std::int64_t free = capacity - usedByOthers;
  return free <= 0 ? 0 : static_cast<int>(free / std::max<std::int64_t>(1, d.perPod));
}

std::vector<WorkloadDemand> assessWorkloads(const ClusterSnapshot& snapshot, const PolicySet& policies) {
  std::vector<WorkloadDemand> out;
  for (const auto& hpa : snapshot.hpas) {
    const Policy* policy = policies.forHpa(hpa.ns, hpa.name, hpa.annotations);
    if (policy == nullptr) continue;
    const ScaleTarget* target = snapshot.target(hpa.ns, hpa.targetKind, hpa.targetName);
    if (target == nullptr || target->gpuRequests.empty()) continue;
    std::vector<const PodState*> pods;
    for (const auto& pod : snapshot.pods) {
      if (pod.active() && !pod.terminating && target->selects(pod)) pods.push_back(&pod);
    }
    WorkloadDemand d;
    d.ns = hpa.ns;
    d.name = hpa.name;
    d.policy = policy;
    d.hpa = &hpa;
    d.target = target;
    d.resource = chooseResource(*target, pods);
    d.perPod = std::max<std::int64_t>(1, target->gpuRequests.at(d.resource));
    int ready = 0;
    bool unschedulable = false;
    for (const PodState* p : pods) {
      if (!p->nodeName.empty()) {
        if (auto idx = snapshot.nodeIndex(p->nodeName)) {
          auto it = p->gpuRequests.find(d.resource);
          if (it != p->gpuRequests.end()) d.ownUsage[*idx] += it->second;
        }
        if (p->phase == "Running") ++d.runningPods;
        if (p->phase == "Running" && p->ready) ++ready;
      } else if (!p->nominated && p->insufficientResource.rfind(kNvidiaPrefix, 0) == 0) {
        unschedulable = true;
      }
    }
    for (std::size_t i = 0; i < snapshot.nodes.size(); ++i) {
      const NodeState& node = snapshot.nodes[i];
      if (!nodeEligible(node, *target)) continue;
      d.eligibleNodes.push_back(i);
      std::int64_t capacity = node.capacityFor(d.resource);
      auto used = node.used.find(d.resource);
      d.ceiling += podsFitting(d, i, capacity, used == node.used.end() ? 0 : used->second);
    }
    double tolerance = hpa.scaleUpTolerance.value_or(policy->tolerance);
    d.wanted = hpaWantedReplicas(hpa, ready, tolerance);
    if (unschedulable) d.wanted = std::max(d.wanted, target->specReplicas);
    // Without a ScalingLimited verdict (older status, or conditions not yet written) fall back to the numbers;
    // an explicit ScaleUpLimit means the HPA is still growing.
    bool rateLimited = hpa.hasCondition("ScalingLimited", "True", "ScaleUpLimit");
    bool limited = hpa.hasCondition("ScalingLimited", "True", "TooManyReplicas") ||
                   (!rateLimited && hpa.desiredReplicas >= hpa.maxReplicas && d.wanted > hpa.maxReplicas);
    bool active = !hpa.hasCondition("ScalingActive", "False");
    if (unschedulable) {
      d.blocked = true;
      d.reason = "Unschedulable";
    } else if (limited && active && hpa.maxReplicas >= d.ceiling) {
      d.blocked = true;
      d.reason = "TooManyReplicas";
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace gpuscale::partition
