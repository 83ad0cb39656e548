#include "gpuscale/partition/contention.h"

#include <algorithm>
#include <numeric>

#include <map>

#include <fmt/format.h>

namespace gpuscale::partition {
namespace {

// Losses for one tier that must give up `shortfall` pods in total: even, none above its need,
// each a whole multiple of its claim's unit (needs are multiples of theirs).
std::vector<int> evenLosses(const std::vector<int>& needs, const std::vector<int>& units,
                            int shortfall) {
  std::vector<int> loss(needs.size(), 0);
  while (shortfall > 0) {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < needs.size(); ++i) {
      if (loss[i] + units[i] <= needs[i]) open.push_back(i);
    }
    if (open.empty()) break;
    const int per = shortfall / static_cast<int>(open.size());
    if (per == 0) {
      // Fewer pods to give up than claims: the later claims give up one unit each.
      for (auto it = open.rbegin(); it != open.rend() && shortfall > 0; ++it) {
        loss[*it] += units[*it];
        shortfall -= units[*it];
      }
      break;
    }
    for (std::size_t i : open) {
      const int add = std::min((per + units[i] - 1) / units[i] * units[i], needs[i] - loss[i]);
      loss[i] += add;
      shortfall -= add;
    }
  }
  // Whole units may have given up more than the shortfall: the surplus goes back, a unit at a
  // time, to the claims that lost one (the earlier first).
  for (bool again = true; again && shortfall < 0;) {
    again = false;
    for (std::size_t i = 0; i < needs.size() && shortfall < 0; ++i) {
      if (loss[i] >= units[i] && units[i] <= -shortfall) {
        loss[i] -= units[i];
        shortfall += units[i];
        again = true;
      }
    }
  }
  return loss;
}

}  // namespace

std::vector<CapacityGrant> shareCapacity(const std::vector<CapacityClaim>& claims, int available) {
  std::vector<CapacityGrant> grants(claims.size());
  std::vector<std::size_t> order(claims.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (claims[a].priority != claims[b].priority) return claims[a].priority > claims[b].priority;
    if (claims[a].promised != claims[b].promised) return claims[a].promised;
    return claims[a].name < claims[b].name;
  });
  int remaining = std::max(0, available);
  for (std::size_t begin = 0; begin < order.size();) {
    const int priority = claims[order[begin]].priority;
    const bool promised = claims[order[begin]].promised;
    std::size_t end = begin;
    while (end < order.size() && claims[order[end]].priority == priority &&
           claims[order[end]].promised == promised) {
      ++end;
    }
    std::vector<int> needs, units;
    for (std::size_t k = begin; k < end; ++k) {
      const CapacityClaim& c = claims[order[k]];
      units.push_back(std::max(1, c.unit));
      needs.push_back(std::max(0, c.need) / units.back() * units.back());
    }
    const int tierNeed = std::accumulate(needs.begin(), needs.end(), 0);
    const std::vector<int> loss =
        evenLosses(needs, units, tierNeed - std::min(tierNeed, remaining));
    const int given = tierNeed - std::accumulate(loss.begin(), loss.end(), 0);
    for (std::size_t k = begin; k < end; ++k) {
      CapacityGrant& g = grants[order[k]];
      const int need = needs[k - begin];
      g.granted = need - loss[k - begin];
      g.shortfall = need - g.granted;
      if (g.shortfall == 0) {
        g.why = fmt::format("priority {}: granted all {} pods it needs", priority, need);
      } else if (available <= 0) {
        g.why = fmt::format("priority {}: granted 0 of {} pods: no idle capacity", priority, need);
      } else if (given == 0) {
        g.why = fmt::format(
            "priority {}: granted 0 of {} pods: HPAs of higher priority{} took the idle capacity",
            priority, need, promised ? "" : ", or promised it earlier,");
      } else {
        g.why = fmt::format(
            "priority {}: {} HPA(s) need {} pods and the idle capacity gives {}; the {} missing "
            "are shared evenly: granted {} of {}",
            priority, end - begin, tierNeed, given, tierNeed - given, g.granted, need);
      }
    }
    remaining -= given;
    begin = end;
  }
  return grants;
}

std::vector<GroupShare> divideGroup(const std::vector<GroupMember>& members, int freePods) {
  std::vector<GroupShare> shares(members.size());
  int needed = 0;  // pods
  int reserved = 0;
  bool promises = false;
  auto unit = [](const GroupMember& m) { return std::max(1, m.podsPerReplica); };
  for (const auto& m : members) {
    needed += std::max(0, m.need) * unit(m);
    if (m.promise) reserved += std::max(0, m.need) * unit(m);
    promises = promises || m.promise;
  }
  const int free = std::max(0, freePods);
  if (needed <= free) {
    if (!promises) return shares;
    // Everything fits: the promises stand, and a grown member may use what they leave.
    for (std::size_t k = 0; k < members.size(); ++k) {
      const GroupMember& m = members[k];
      if (!m.promise)
        shares[k].maxReplicas = std::min(m.ceilingAfter, m.held + (free - reserved) / unit(m));
    }
    return shares;
  }
  std::vector<CapacityClaim> claims;
  for (const auto& m : members)
    claims.push_back({m.name, m.priority, std::max(0, m.need) * unit(m), m.promise, unit(m)});
  const std::vector<CapacityGrant> grants = shareCapacity(claims, free);
  for (std::size_t k = 0; k < members.size(); ++k) {
    const GroupMember& m = members[k];
    GroupShare& share = shares[k];
    share.why = grants[k].why;
    const int keep = m.held + grants[k].granted / unit(m);
    if (!m.promise) {
      share.maxReplicas = std::min(m.ceilingAfter, keep);
      continue;
    }
    // Only what a higher priority was granted is taken from a promise: capacity that vanished
    // otherwise (pods already placed took it) is not re-divided, the raise stays bounded by
    // allocatable when it lands.
    int higher = 0;  // pods
    for (std::size_t j = 0; j < members.size(); ++j) {
      if (members[j].priority > m.priority) higher += grants[j].granted;
    }
    // The replicas those pods were promised as: whole groups, rounded up.
    const int to = std::max({m.floor, keep, m.promisedMax - (higher + unit(m) - 1) / unit(m)});
    if (to < m.promisedMax) {
      share.cutTo = to;
      share.why += fmt::format("; the promise of maxReplicas {} is cut to {}", m.promisedMax, to);
    } else {
      share.why += fmt::format("; keeps the promise of maxReplicas {}", m.promisedMax);
    }
  }
  return shares;
}

std::vector<std::vector<const WorkloadDemand*>> contentionGroups(
    const std::vector<WorkloadDemand>& workloads) {
  std::vector<const WorkloadDemand*> blocked;
  for (const auto& d : workloads) {
    if (d.blocked || d.promisedPods > 0) blocked.push_back(&d);
  }
  std::stable_sort(blocked.begin(), blocked.end(), [](const auto* a, const auto* b) {
    return a->priority.value > b->priority.value;
  });
  std::vector<std::size_t> parent(blocked.size());
  for (std::size_t k = 0; k < parent.size(); ++k) parent[k] = k;
  auto root = [&](std::size_t k) {
    while (parent[k] != k) k = parent[k] = parent[parent[k]];
    return k;
  };
  std::map<std::size_t, std::size_t> nodeOwner;  // node index -> first workload seen there
  for (std::size_t k = 0; k < blocked.size(); ++k) {
    for (std::size_t i : blocked[k]->eligibleNodes) {
      auto [it, fresh] = nodeOwner.emplace(i, k);
      if (!fresh) parent[root(k)] = root(it->second);
    }
  }
  std::map<std::size_t, std::size_t> groupOf;
  std::vector<std::vector<const WorkloadDemand*>> groups;
  for (std::size_t k = 0; k < blocked.size(); ++k) {
    auto [it, fresh] = groupOf.emplace(root(k), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(blocked[k]);
  }
  return groups;
}

}  // namespace gpuscale::partition
