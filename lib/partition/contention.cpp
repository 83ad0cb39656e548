#include "gpuscale/partition/contention.h"

#include <algorithm>
#include <numeric>

#include <map>

#include <fmt/format.h>

namespace gpuscale::partition {
namespace {

// Losses for one tier that must give up `shortfall` pods in total: even, none above its need.
std::vector<int> evenLosses(const std::vector<int>& needs, int shortfall) {
  std::vector<int> loss(needs.size(), 0);
  while (shortfall > 0) {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < needs.size(); ++i) {
      if (loss[i] < needs[i]) open.push_back(i);
    }
    if (open.empty()) break;
    const int per = shortfall / static_cast<int>(open.size());
    if (per == 0) {
      // Fewer pods to give up than claims: the later claims give up one each.
      for (auto it = open.rbegin(); it != open.rend() && shortfall > 0; ++it, --shortfall) {
        ++loss[*it];
      }
      break;
    }
    for (std::size_t i : open) {
      const int add = std::min(per, needs[i] - loss[i]);
      loss[i] += add;
      shortfall -= add;
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
    return claims[a].name < claims[b].name;
  });
  int remaining = std::max(0, available);
  for (std::size_t begin = 0; begin < order.size();) {
    const int priority = claims[order[begin]].priority;
    std::size_t end = begin;
    while (end < order.size() && claims[order[end]].priority == priority) ++end;
    std::vector<int> needs;
    for (std::size_t k = begin; k < end; ++k) needs.push_back(std::max(0, claims[order[k]].need));
    const int tierNeed = std::accumulate(needs.begin(), needs.end(), 0);
    const int given = std::min(tierNeed, remaining);
    const std::vector<int> loss = evenLosses(needs, tierNeed - given);
    for (std::size_t k = begin; k < end; ++k) {
      CapacityGrant& g = grants[order[k]];
      const int need = needs[k - begin];
      g.granted = need - loss[k - begin];
      g.shortfall = need - g.granted;
      if (g.shortfall == 0) {
        g.why = fmt::format("priority {}: granted all {} pods it needs", priority, need);
      } else if (given == 0) {
        g.why = fmt::format(
            "priority {}: granted 0 of {} pods: HPAs of higher priority took the idle capacity",
            priority, need);
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

std::vector<std::vector<const WorkloadDemand*>> contentionGroups(
    const std::vector<WorkloadDemand>& workloads) {
  std::vector<const WorkloadDemand*> blocked;
  for (const auto& d : workloads) {
    if (d.blocked) blocked.push_back(&d);
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
