#include "gpuscale/partition/demand.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "capacity_request_snapshot.h"
#include "gpuscale/core/enum_names.h"
#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/partition/lead_time.h"
#include "gpuscale/partition/resource_names.h"
#include "node_resource_table.h"
#include "saturating.h"

namespace gpuscale::partition {
namespace {

// ceil() that ignores floating-point noise just above an integer (56.0000000001 -> 56).
int ceilReplicas(double x) { return saturatedInt(std::ceil(x - 1e-9)); }

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

bool matches(const Labels& selector, const Labels& labels) {
  return std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
    auto it = labels.find(kv.first);
    return it != labels.end() && it->second == kv.second;
  });
}

// (namespace, label key, label value), pointing into the snapshot: an index key made without
// copying a string.
using IndexKey = std::tuple<std::string_view, std::string_view, std::string_view>;

struct IndexKeyHash {
  std::size_t operator()(const IndexKey& k) const {
    const std::hash<std::string_view> h;
    std::size_t seed = h(std::get<0>(k));
    for (std::size_t part : {h(std::get<1>(k)), h(std::get<2>(k))})
      seed ^= part + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    return seed;
  }
};

// The label of a node selector that nodesFor looks nodes up by: the first that must match exactly
// (product labels may be renamed).
Labels::const_iterator exactNodeLabel(const Labels& nodeSelector) {
  return std::find_if(nodeSelector.begin(), nodeSelector.end(),
                      [](const auto& kv) { return !productLabelResource(kv.first); });
}

// Label indexes so that 1,000 HPAs x 20,000 pods x 1,000 nodes stays cheap: objects by one label
// pair, for the label keys the targets look up by (their selector's first, their nodeSelector's
// first exact one).
class LabelIndex {
 public:
  explicit LabelIndex(const ClusterSnapshot& snapshot) : snapshot_(snapshot) {
    std::unordered_set<std::string_view> podKeys, nodeKeys;
    for (const auto& t : snapshot.targets) {
      if (!t.selector.empty()) podKeys.insert(t.selector.begin()->first);
      if (auto exact = exactNodeLabel(t.nodeSelector); exact != t.nodeSelector.end())
        nodeKeys.insert(exact->first);
    }
    for (const auto& pod : snapshot.pods) {
      if (!pod.active() || pod.terminating) continue;
      for (const auto& [k, v] : pod.labels) {
        if (podKeys.contains(k)) pods_[IndexKey{pod.ns, k, v}].push_back(&pod);
      }
    }
    for (std::size_t i = 0; i < snapshot.nodes.size(); ++i) {
      const NodeState& n = snapshot.nodes[i];
      for (const auto& [k, v] : n.labels) {
        if (nodeKeys.contains(k)) nodes_[IndexKey{"", k, v}].push_back(i);
      }
      if (n.schedulable) schedulable_[n.dra()].push_back(i);
    }
  }

  std::vector<const PodState*> podsOf(const ScaleTarget& target) const {
    std::vector<const PodState*> out;
    if (target.selector.empty()) return out;
    const auto& first = *target.selector.begin();
    auto it = pods_.find(IndexKey{target.ns, first.first, first.second});
    if (it == pods_.end()) return out;
    for (const PodState* p : it->second) {
      if (target.selects(*p)) out.push_back(p);
    }
    return out;
  }

  // Schedulable nodes matching the pod template's nodeSelector, product labels across GFD's
  // renames, in name order; for pods that claim devices through DRA the nodes that follow a DRA
  // model, for the others those that do not.
  std::vector<std::size_t> nodesFor(const ScaleTarget& target) const {
    std::vector<std::size_t> out;
    auto keep = [&](std::size_t i) {
      const NodeState& n = snapshot_.nodes[i];
      if (n.schedulable && n.dra() == target.draClaims &&
          selectsAcrossRenames(target.nodeSelector, n.labels))
        out.push_back(i);
    };
    // Without a nodeSelector: every schedulable node of the pods' model.
    if (target.nodeSelector.empty()) return schedulable_[target.draClaims];
    auto first = exactNodeLabel(target.nodeSelector);
    if (first == target.nodeSelector.end()) {
      for (std::size_t i = 0; i < snapshot_.nodes.size(); ++i) keep(i);
      return out;
    }
    auto it = nodes_.find(IndexKey{"", first->first, first->second});
    if (it != nodes_.end()) {
      for (std::size_t i : it->second) keep(i);
    }
    return out;
  }

 private:
  const ClusterSnapshot& snapshot_;
  std::unordered_map<IndexKey, std::vector<const PodState*>, IndexKeyHash> pods_;
  std::unordered_map<IndexKey, std::vector<std::size_t>, IndexKeyHash> nodes_;
  std::vector<std::size_t> schedulable_[2];  // [NodeState::dra()], in name order
};

}  // namespace

std::string_view blockReasonName(BlockReason reason) {
  static constexpr core::EnumNames<BlockReason, 5> kNames{
      {{BlockReason::kTooManyReplicas, "TooManyReplicas"},
       {BlockReason::kRequested, "Requested"},
       {BlockReason::kUnschedulable, "Unschedulable"},
       {BlockReason::kAnticipated, "Anticipated"},
       {BlockReason::kNone, ""}}};
  return core::enumName(kNames, reason, "");
}

int hpaWantedReplicas(const HpaState& hpa, int readyPods, double tolerance) {
  const int current = hpa.currentReplicas;
  // The status' metrics were averaged at the HPA's last sync, over at most currentReplicas pods:
  // pods that became ready since then are not in that average yet.
  const int ready = readyPods > 0 ? std::min(readyPods, current) : current;
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
  return free <= 0 ? 0 : saturatedInt(free / std::max<std::int64_t>(1, d.perPod));
}

namespace {

// Blocks `d` ahead of its ceiling when the forecast says the HPA gets there within the lead time
// (the policy's, or longer where the reconciler measured its levers to be slower on d's nodes).
void anticipate(WorkloadDemand& d, const ClusterSnapshot& snapshot, TimePoint now) {
  const HpaState& hpa = *d.hpa;
  const HpaObservation current{now, hpa.currentReplicas, hpa.desiredReplicas, d.wanted};
  std::vector<std::string> nodes;
  for (std::size_t i : d.eligibleNodes) nodes.push_back(snapshot.nodes[i].name);
  const LeadTime lead = leadTimeFor(*d.policy, nodes, snapshot.measuredLeadTimes);
  CeilingForecast f = forecastCeiling(hpa.history, current, hpa.maxReplicas, lead.seconds,
                                      d.policy->anticipation, now);
  if (lead.source != "policy leadTime") f.why += fmt::format("; lead time {}", lead.source);
  if (f.reaches) {
    d.blocked = true;
    d.reason = BlockReason::kAnticipated;
    d.wanted = std::max(d.wanted, f.predictedWanted);
  }
  d.forecast = std::move(f);
}

// Which rule of the file comment let `d` through (for `explain`).
std::string notBlockedWhy(const WorkloadDemand& d, bool limited, bool rateLimited, bool active) {
  const HpaState& hpa = *d.hpa;
  if (!active) return "ScalingActive is False: the HPA does not scale on its metrics now";
  if (limited && hpa.maxReplicas < d.ceiling) {
    return fmt::format(
        "held by its own maxReplicas {}, below the {} pods the partitions hold: raise maxReplicas "
        "on the HPA",
        hpa.maxReplicas, d.ceiling);
  }
  if (rateLimited) return "still growing (ScalingLimited ScaleUpLimit), not at its maxReplicas";
  std::string why = fmt::format("wants {} replicas (desired {}) within maxReplicas {}", d.wanted,
                                hpa.desiredReplicas, hpa.maxReplicas);
  if (d.forecast && !d.forecast->why.empty()) why += "; forecast: " + d.forecast->why;
  return why;
}

// A capacity request wants its spec.replicas, and is blocked while they exceed what it was
// granted (its maxReplicas), whatever the partitions hold now: the planner grants from free
// partitions first and changes partitions for the rest.
void assessRequest(WorkloadDemand& d, const CapacityRequest& request) {
  d.wanted = request.replicas;
  if (request.replicas > d.hpa->maxReplicas) {
    d.blocked = true;
    d.reason = BlockReason::kRequested;
  } else {
    d.notBlockedWhy =
        fmt::format("asks for {} replicas and holds {}", request.replicas, d.hpa->maxReplicas);
  }
}

std::vector<WorkloadDemand> assessAt(const ClusterSnapshot& snapshot, const PolicySet& policies,
                                     std::optional<TimePoint> now) {
  std::vector<WorkloadDemand> out;
  const LabelIndex index(snapshot);
  const detail::NodeResourceTable table(snapshot.nodes);
  for (const auto& hpa : snapshot.hpas) {
    const Policy* policy = policies.forHpa(hpa.ns, hpa.name, hpa.labels, hpa.annotations);
    if (policy == nullptr) continue;
    const ScaleTarget* target = snapshot.target(hpa.ns, hpa.targetKind, hpa.targetName);
    if (target == nullptr || target->gpuRequests.empty()) continue;
    const CapacityRequest* request = hpa.capacityRequest.get();
    const std::vector<const PodState*> pods = target->kind == kCapacityRequestKind
                                                  ? detail::requestPods(snapshot, *target)
                                                  : index.podsOf(*target);
    WorkloadDemand d;
    d.ns = hpa.ns;
    d.name = hpa.name;
    d.policy = policy;
    d.hpa = &hpa;
    d.target = target;
    d.priority = request != nullptr ? requestPriority(*policy, *request, pods)
                                    : workloadPriority(*policy, pods);
    d.resource = chooseResource(*target, pods);
    d.perPod = std::max<std::int64_t>(1, target->gpuRequests.at(d.resource));
    int ready = 0;
    bool unschedulable = false;
    bool unmatched = false;  // a pod the scheduler left out for its nodeSelector alone, maybe
    for (const PodState* p : pods) {
      if (!p->nodeName.empty()) {
        if (auto idx = snapshot.nodeIndex(p->nodeName)) {
          auto it = p->gpuRequests.find(d.resource);
          if (it != p->gpuRequests.end()) d.ownUsage[*idx] += it->second;
        }
        if (p->phase == "Running") ++d.runningPods;
        if (p->phase == "Running" && p->ready) ++ready;
      } else if (!p->nominated && !p->insufficientResource.empty()) {
        // An nvidia.com/ resource the scheduler found lacking, or the kind of claims it could not
        // allocate (dra_capacity.h).
        unschedulable = true;
      } else if (!p->nominated && p->unschedulable) {
        unmatched = true;
      }
    }
    d.eligibleNodes = index.nodesFor(*target);
    d.productPins = productPins(target->nodeSelector);
    const auto key = table.key(d.resource);
    for (std::size_t i : d.eligibleNodes) {
      // Pods land only where the product label matches exactly now.
      if (!matches(target->nodeSelector, snapshot.nodes[i].labels)) {
        // Pending pods pinned to a product spelling an eligible node lacks: the rename a
        // sharing change brings would let them in.
        if (unmatched && !d.productPins.empty()) unschedulable = true;
        continue;
      }
      d.ceiling = addSaturated(
          d.ceiling, podsFitting(d, i, table.capacity(i, key), table.used(i, key.resource)));
    }
    // A replica is a group of podsPerReplica pods that each need their partitions: only whole
    // groups count.
    const int group = std::max(1, target->podsPerReplica);
    d.ceiling /= group;
    double tolerance = hpa.scaleUpTolerance.value_or(policy->tolerance);
    d.wanted = hpaWantedReplicas(hpa, ready, tolerance);
    if (unschedulable) d.wanted = std::max(d.wanted, target->specReplicas);
    // Without a ScalingLimited verdict (older status, or conditions not yet written) fall back to
    // the numbers; an explicit ScaleUpLimit means the HPA is still growing.
    bool rateLimited = hpa.hasCondition("ScalingLimited", "True", "ScaleUpLimit");
    bool limited =
        hpa.hasCondition("ScalingLimited", "True", "TooManyReplicas") ||
        (!rateLimited && hpa.desiredReplicas >= hpa.maxReplicas && d.wanted > hpa.maxReplicas);
    bool active = !hpa.hasCondition("ScalingActive", "False");
    if (request != nullptr) {
      assessRequest(d, *request);
    } else if (unschedulable) {
      d.blocked = true;
      d.reason = BlockReason::kUnschedulable;
    } else if (limited && active && hpa.maxReplicas >= d.ceiling) {
      d.blocked = true;
      d.reason = BlockReason::kTooManyReplicas;
    } else if (now && active && policy->anticipation.enabled && hpa.maxReplicas >= d.ceiling) {
      anticipate(d, snapshot, *now);
    }
    if (!d.blocked && request == nullptr)
      d.notBlockedWhy = notBlockedWhy(d, limited, rateLimited, active);
    for (const auto& [i, units] : d.ownUsage) {
      d.heldPods = addSaturated(d.heldPods, saturatedInt(units / d.perPod));
    }
    d.heldPods /= group;
    d.inFlight = hpa.promisedMaxReplicas.has_value();
    // What a request was granted is held for it until it asks for less or goes away.
    const int promisedMax = hpa.promisedMaxReplicas.value_or(
        request != nullptr ||
                (hpa.originalMaxReplicas && hpa.maxReplicas > *hpa.originalMaxReplicas)
            ? hpa.maxReplicas
            : 0);
    d.promisedPods = std::max(0, std::min(d.wanted, promisedMax) - d.heldPods);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

std::vector<WorkloadDemand> assessWorkloads(const ClusterSnapshot& snapshot,
                                            const PolicySet& policies) {
  return assessAt(snapshot, policies, std::nullopt);
}

std::vector<WorkloadDemand> assessWorkloads(const ClusterSnapshot& snapshot,
                                            const PolicySet& policies, TimePoint now) {
  return assessAt(snapshot, policies, now);
}

}  // namespace gpuscale::partition
