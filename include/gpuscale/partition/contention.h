// Contention: how the planner divides idle GPU capacity between blocked HPAs that want more than
// it can give. The rule, in pods of each HPA's resource:
//   1. higher priority first (the policy's `priority`, else the PriorityClass of the HPA's pods:
//      workload_priority.h): a tier gets everything it needs before a
//      lower tier gets anything;
//   2. within the tier that runs short, the shortfall is shared evenly: every claim gives up the
//      same number of pods, except that none gives up more than it asked for (water-filling; the
//      pods an even split cannot place go to the claims earlier in namespace/name order).
// Capacity already held by running pods is never part of `available`: nothing is taken back.
//
// Limits: shares count pods, not GPU memory (a 1g.5gb pod and a 3g.20gb pod weigh the same), and
// `available` is what the levers found for the tier, so a reshape that could have served one claim
// better than another is not searched for.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "gpuscale/partition/demand.h"

namespace gpuscale::partition {

struct CapacityClaim {
  std::string name;  // namespace/name of the HPA
  int priority = 0;
  int need = 0;  // more pods wanted than the partitions hold now
};

struct CapacityGrant {
  int granted = 0;
  int shortfall = 0;  // need - granted
  std::string why;    // one sentence for Events and plan notes
};

// One grant per claim, in the claims' order. `available` < 0 is treated as 0.
std::vector<CapacityGrant> shareCapacity(const std::vector<CapacityClaim>& claims, int available);

// The blocked workloads that compete: grouped by eligible nodes they share (transitively), each
// group in priority order (higher first, then the input order, namespace/name), groups in the
// order of their first member. Workloads of different groups cannot take capacity from each other.
std::vector<std::vector<const WorkloadDemand*>> contentionGroups(
    const std::vector<WorkloadDemand>& workloads);

}  // namespace gpuscale::partition
