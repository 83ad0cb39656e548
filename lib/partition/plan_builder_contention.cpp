// PlanBuilder's contention step (plan_builder.h): growing a group of workloads that can use the
// same nodes and dividing what is free between them (contention.h).
#include <algorithm>
#include <set>

#include "gpuscale/partition/contention.h"
#include "gpuscale/partition/resource_names.h"
#include "plan_builder.h"

namespace gpuscale::partition::detail {

int PlanBuilder::freePods(const std::set<std::size_t>& nodes, const std::string& resource,
                          std::int64_t perPod) const {
  const ResourceKey k = keyOf(resource);
  std::int64_t freeUnits = 0;
  for (std::size_t i : nodes) {
    std::int64_t capacity = deviceCount(i, k) * replicas(i, k);
    // A node operation in flight will leave the node with what its intent expects: capacity
    // promised to the HPA that asked for it, which contention must count to divide it.
    if (auto it = snap_.nodes[i].expected.find(resource); it != snap_.nodes[i].expected.end())
      capacity = std::max(capacity, it->second);
    freeUnits += std::max<std::int64_t>(0, capacity - usedOn(i, k));
  }
  return static_cast<int>(freeUnits / std::max<std::int64_t>(1, perPod));
}

void PlanBuilder::growGroup(const std::vector<const WorkloadDemand*>& group) {
  std::vector<std::optional<Growth>> grown;
  std::vector<bool> promise;
  bool anyPromise = false;
  for (const WorkloadDemand* d : group) {
    // A change in flight is not grown again, and an HPA that is not blocked is here only for
    // the promise it holds.
    promise.push_back(d->inFlight || !d->blocked);
    anyPromise = anyPromise || promise.back();
    grown.push_back(promise.back() ? std::nullopt : grow(*d));
  }
  if (group.size() < 2) return;
  const WorkloadDemand& lead = *group.front();
  std::set<std::size_t> nodes;
  for (const WorkloadDemand* d : group) {
    // Shares count pods of one size (contention.h): different resources are not shared.
    if (d->resource != lead.resource || d->perPod != lead.perPod) return;
    nodes.insert(d->eligibleNodes.begin(), d->eligibleNodes.end());
  }
  std::vector<GroupMember> members;
  for (std::size_t k = 0; k < group.size(); ++k) {
    const WorkloadDemand& d = *group[k];
    GroupMember m{d.ns + "/" + d.name, d.priority.value, d.heldPods};
    m.promise = promise[k];
    m.podsPerReplica = podsPerReplica(d);
    if (m.promise) {
      m.need = d.promisedPods;
      m.promisedMax = d.hpa->promisedMaxReplicas.value_or(d.hpa->maxReplicas);
      // Never below the maxReplicas before the raise, nor below the pods the target has.
      m.floor = std::max({d.hpa->promisedMaxReplicas
                              ? d.hpa->maxReplicas
                              : d.hpa->originalMaxReplicas.value_or(d.hpa->maxReplicas),
                          d.target->specReplicas, d.hpa->minReplicas});
    } else if (grown[k]) {
      m.need = std::max(0, grown[k]->aim - m.held);
      m.ceilingAfter = grown[k]->after;
    }
    members.push_back(std::move(m));
  }
  if (!anyPromise && std::none_of(grown.begin(), grown.end(), [](const auto& g) { return g; }))
    return;
  const std::vector<GroupShare> shares =
      divideGroup(members, freePods(nodes, lead.resource, lead.perPod));
  for (std::size_t k = 0; k < group.size(); ++k) {
    const WorkloadDemand& d = *group[k];
    const GroupShare& s = shares[k];
    if (s.maxReplicas && grown[k]) {
      if (*s.maxReplicas > d.hpa->maxReplicas) {
        setMax(d, *s.maxReplicas);
      } else {
        maxChanges_.erase({d.ns, d.name});
      }
    }
    if (s.cutTo) {
      cut_.insert({d.ns, d.name});
      if (d.inFlight) {
        promiseCuts_.push_back({d.ns, d.name, members[k].promisedMax, *s.cutTo});
      } else if (*s.cutTo < d.hpa->maxReplicas) {
        setMax(d, *s.cutTo);
      }
    }
    // The share's sentence, and where the HPA's priority came from.
    if (!s.why.empty()) {
      shares_[{d.ns, d.name}] = s.why + " (priority from " + d.priority.source + ")";
    }
  }
}

}  // namespace gpuscale::partition::detail
