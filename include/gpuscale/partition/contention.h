// Contention: how the planner divides idle GPU capacity between blocked HPAs that want more than
// it can give. The rule, in pods of each HPA's resource:
//   1. higher priority first (the policy's `priority`, else the HPA's pods' spec.priority as
//      admission resolved it: workload_priority.h): a tier gets everything it needs before a
//      lower tier gets anything; within a priority, capacity promised earlier comes first;
//   2. within the tier that runs short, the shortfall is shared evenly: every claim gives up the
//      same number of pods, except that none gives up more than it asked for (water-filling; the
//      pods an even split cannot place go to the claims earlier in namespace/name order);
//   3. a workload whose replica is a group of pods (a LeaderWorkerSet's) is granted whole groups
//      only, since a group needs all its partitions: it gives up whole groups, and the pods a
//      rounded-up loss frees go back to the claims of the tier that can take them (earlier
//      namespace/name first), in their own units.
// Capacity already held by running pods is never part of `available`: nothing is taken back.
// Capacity promised to an HPA whose change is in flight (or whose raise its pods have not filled
// yet) is reserved for it in later plans: a later-blocked HPA sees only the rest, unless it has
// the higher priority, when the rule divides the promise again (divideGroup).
//
// Limits: shares count pods, not GPU memory (a 1g.5gb pod and a 3g.20gb pod weigh the same), and
// `available` is what the levers found for the tier, so a reshape that could have served one claim
// better than another is not searched for.
//
// Thread safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuscale/partition/demand.h"

namespace gpuscale::partition {

struct CapacityClaim {
  std::string name;  // namespace/name of the HPA
  int priority = 0;
  int need = 0;  // more pods wanted than the partitions hold now
  // Capacity promised earlier (a change in flight, a raise not yet filled): served before the
  // claims of its priority that are not promised, so only a higher priority takes it back.
  bool promised = false;
  // Pods per replica: `need` and the grant are whole multiples of it (need is rounded down).
  int unit = 1;
};

struct CapacityGrant {
  int granted = 0;
  int shortfall = 0;  // need - granted
  std::string why;    // one sentence for Events and plan notes
};

// One grant per claim, in the claims' order. `available` < 0 is treated as 0.
std::vector<CapacityGrant> shareCapacity(const std::vector<CapacityClaim>& claims, int available);

// One member of a contention group as the planner knows it once the group's levers are chosen:
// either a workload the plan grows (blocked, no change in flight) or one holding a promise (a
// change in flight, or a raise its pods have not filled: demand.h `promisedPods`), which the plan
// does not grow.
struct GroupMember {
  std::string name;  // namespace/name of the HPA
  int priority = 0;
  int held = 0;          // pods placed
  int need = 0;          // grown: the aim minus `held`; promise: its promisedPods
  bool promise = false;  // a promise holder
  int ceilingAfter = 0;  // grown: the pods its partitions hold after this plan
  int promisedMax = 0;   // promise: the maxReplicas promised (a change in flight's, else the HPA's)
  int floor = 0;         // promise: the lowest a cut may go (maxReplicas before the raise, and the
                         // replicas its target already has: their pods exist)
  // Pods per replica (a group's pods each need a partition): held, need, ceilingAfter,
  // promisedMax and floor count replicas, freePods counts pods.
  int podsPerReplica = 1;
};

struct GroupShare {
  std::optional<int> maxReplicas;  // grown: the maxReplicas the rule allows (nullopt: as grown)
  std::optional<int> cutTo;        // promise: the lower maxReplicas it keeps (nullopt: all of it)
  std::string why;                 // when the group ran short: one sentence for Events and explain
};

// Divides `freePods` (free after this plan's changes, counting the partitions changes in flight
// will create) between the members of one group, in the members' order, in whole replicas of
// each member's podsPerReplica pods:
//   - promises are reserved: a grown member gets at most its held pods plus what the promises
//     leave (`freePods` minus every promise), and never more than its partitions hold;
//   - when the needs (promises included) exceed `freePods`, shareCapacity decides (a promise
//     before the claims of its own priority): a grown member gets its held pods plus its grant; a
//     promise holder keeps held + grant, not less than its floor, and its promise is cut when that
//     is below `promisedMax` — by at most what members of higher priority were granted
//     (re-division, for a higher priority only: only capacity not yet used by pods is moved,
//     never a running pod's; capacity that pods placed meanwhile took cuts nothing).
// Without promise holders and without a shortfall every share is empty (each keeps what it grew).
std::vector<GroupShare> divideGroup(const std::vector<GroupMember>& members, int freePods);

// The workloads that compete: the blocked ones and those holding a promise (promisedPods > 0: a
// change in flight or a raise their pods have not filled), grouped by eligible nodes they share
// (transitively), each group in priority order (higher first, then the input order,
// namespace/name), groups in the order of their first member. Workloads of different groups
// cannot take capacity from each other.
std::vector<std::vector<const WorkloadDemand*>> contentionGroups(
    const std::vector<WorkloadDemand>& workloads);

}  // namespace gpuscale::partition
