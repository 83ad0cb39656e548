// The planner: snapshot + demands + policies -> plan. Pure and deterministic (same inputs, same
// plan).
//
// Blocked workloads (at the ceiling, unschedulable, or anticipated: demand.h) are grouped by the
// nodes they share (contention.h); within a group, in priority order then namespace/name, each aims
// at min(wanted, the policy's hard max) pods and tries the policy's levers in order until the
// partitions its pods can get reach that aim:
//   migReshape  - rebuild idle GPUs: every GPU of a node with no GPU pod bound to it, and on a
//                 mixed-strategy node with GPU pods the MIG-enabled GPUs whose `busy` the caller
//                 cleared (a per-GPU mapping; by default one GPU pod makes every GPU of its node
//                 busy). Per GPU it picks,
//                 among the maximal geometries of the allowed profiles, one that covers the
//                 remaining need while removing the fewest existing instances and introducing the
//                 fewest new profile types (else the one adding the most). Single-strategy nodes
//                 are rebuilt uniformly to the allowed profile with the most instances. Nodes are
//                 changed with a per-GPU mig-parted config that restates untouched GPUs.
//                 MIG mode changes only under the policy's migModeChange (default off), after
//                 every geometry change of the workload's nodes fell short: an idle GPU with MIG
//                 disabled on a mixed-strategy node without any GPU pod (mig-parted resets every
//                 GPU of the node for a mode change) gets MIG and the geometry that covers the
//                 need; without the opt-in `explain` says MigModeOff for such a GPU. Give-back
//                 (migGiveBack: restore) disables MIG again only under the same opt-in.
//   timeSlicing - raise node-wide replicas of the workload's resource, up to the policy's
//   per-device limit
//                 and to partition memory / per-pod GPU memory, by the least step that covers the
//                 need.
//   mps         - the same with the device plugin's MPS sharing (mps_sharing.h): whole GPUs of
//                 nodes with MIG disabled, not time-sliced, for pods asking one unit, up to the
//                 policy's mps.maxReplicas (at most 48) and no further than leaves each replica the
//                 pod's memory; nodes with GPU pods only when the policy allows it. A node is never
//                 both time-sliced and MPS-shared.
// Two rules keep the choice independent of metric timing (lever_choice.h): a workload that could
// reshape a node whose per-GPU mapping is still settling gets no lever in this plan (a note says
// so), and nodes whose devices of the resource are saturated (measured utilisation at or above
// timeSlicing.saturation) are time-sliced last, and only when no reshape gained anything for the
// workload in this plan, whatever the order of the levers, and its running pods fill the
// partitions it has.
// Then it raises the HPA's maxReplicas to min(hard max, new partition ceiling). When the members of
// a group still need more pods than the changed nodes leave free, the contention rule shares the
// free pods (priority, then an even share of the shortfall) and each maxReplicas is raised only to
// the pods the HPA holds plus its share; the demand's `explain` says why.
// Workloads with a change in flight (WorkloadDemand::inFlight) are passed in too: they are neither
// grown nor shrunk, but they, and HPAs whose raise their pods have not filled, keep the pods
// promised to them in their group (promisedPods, counted against the partitions in-flight node
// operations will create): a later-blocked HPA gets only what the promises leave, and only a
// higher priority re-divides a promise (Plan::promiseCuts, or a lowered maxReplicas for a raise
// already made; never below the replicas the HPA's target has: contention.h divideGroup).
//
// Scale-in: for a managed workload that is not blocked, whose maxReplicas gpuscale raised
// (annotation gpuscale.io/original-max-replicas) and whose last gpuscale change is older than the
// policy's scale-down cooldown (the HPA scaling meanwhile does not hold it back), it lowers
// time-slicing replicas on nodes whose device-plugin config gpuscale wrote, keeping room for
// max(wanted, spec.replicas, minReplicas) pods and never going below what pods bound to the node
// use (MPS replicas as they are), then lowers maxReplicas towards the original value (never below
// spec.replicas).
//
// Capacity requests (capacity_request.h) are planned like HPAs, except that a request is granted
// at most what it asks for, is lowered at once to what it asks for when that is less, and no
// give-back lowers sharing or restores MIG on the nodes of a request whose grant its pods do not
// use yet.
//
// Safety: a node in a MIG transition (mig.config.state pending/rebooting/failed, operands paused)
// is never touched; a node whose MIG state no mig-manager reports is never reshaped
// (MigNotManaged); a GPU is reshaped only when idle and at most once per plan; time-slicing changes
// do not affect running pods; nodes outside the policy's nodeSelector are not changed. The scale-up
// cooldown skips workloads changed less than `scaleUp` ago (annotation gpuscale.io/last-change).
//
// Thread safety: pure function.
#pragma once

#include <vector>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

// `workloads` come from assessWorkloads(snapshot, ...); `now` is compared with cooldown timestamps.
Plan planPartitions(const ClusterSnapshot& snapshot, const std::vector<WorkloadDemand>& workloads,
                    TimePoint now);

}  // namespace gpuscale::partition
