// Demand detection: for each HPA a partition policy manages, how many GPU partitions its pods can
// get now (the ceiling), how many replicas the HPA would want without limits (the HPA controller's
// own formula), and whether it is blocked by partitions.
//
// An HPA is blocked when
//   - it is limited by maxReplicas (condition ScalingLimited=True/TooManyReplicas, or
//   desiredReplicas >= max
//     with the formula asking for more, while ScalingActive is not False) and maxReplicas is not
//     below its partition ceiling, or
//   - a pod of its target is Pending, unbound, not preempting, with
//   PodScheduled=False/Unschedulable and a
//     message naming `Insufficient nvidia.com/...`.
// Rate limiting (ScaleUpLimit) alone is not a block: the HPA is still growing.
//
// Capacity requests (capacity_request.h) are HpaStates too: a request wants its spec.replicas, is
// blocked (kRequested) while they exceed its maxReplicas (the granted count), and always holds a
// promise of what it was granted; it is never anticipated.
//
// Promises: an HPA with a change in flight, or whose maxReplicas gpuscale raised, holds a promise
// of the pods it wants up to that maxReplicas beyond those it has placed (`promisedPods`).
//
// Anticipation (only with `now`, when the policy enables it): an HPA that is not blocked, whose
// maxReplicas is at its partition ceiling and whose forecast (ceiling_forecast.h, from
// HpaState::history and this pass's observation) reaches maxReplicas within the lead time of the
// policy's levers (lead_time.h: the policy's, or what the reconciler measured on the HPA's nodes
// when longer; ClusterSnapshot::measuredLeadTimes), is blocked with reason kAnticipated and
// `wanted` raised to the prediction.
//
// Wanted replicas: per metric, ratio = current/target; within tolerance (|1 - ratio| <= tolerance,
// the policy's value or spec.behavior.scaleUp.tolerance) the proposal is currentReplicas, else
// ceil(ratio x ready pods) for per-pod metrics and Value targets, ceil(ratio x currentReplicas) for
// Object and External AverageValue targets; the largest proposal wins. Ready pods count at most
// the status' currentReplicas: its metrics are the last sync's, averaged over the pods of then, and
// pods that became ready since (after a scale-up) would otherwise multiply a stale average. With
// unschedulable pods the target's spec.replicas is a lower bound.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/partition/ceiling_forecast.h"
#include "gpuscale/partition/gpu_product.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/partition/workload_priority.h"

namespace gpuscale::partition {

// Why a demand is blocked (demand.h's rules), or kNone. kRequested: a capacity request
// (capacity_request.h) asks for more replicas than it holds.
enum class BlockReason { kNone, kTooManyReplicas, kUnschedulable, kAnticipated, kRequested };
// "" | "TooManyReplicas" | "Unschedulable" | "Anticipated" | "Requested"
std::string_view blockReasonName(BlockReason reason);

struct WorkloadDemand {
  std::string ns, name;  // the HPA
  const Policy* policy = nullptr;
  const HpaState* hpa = nullptr;
  const ScaleTarget* target = nullptr;
  std::string resource;  // the nvidia.com/ resource one pod requests
  std::int64_t perPod = 1;
  // Replicas the partitions can hold now (own usage + free): pods, or whole groups of
  // ScaleTarget::podsPerReplica pods when a replica is a group (pods summed over the nodes, then
  // divided: a group's pods may land on different nodes).
  int ceiling = 0;
  int wanted = 0;  // the HPA formula, unclamped
  int runningPods = 0;
  // Replicas bound to nodes (running or starting; whole groups): what the HPA already placed.
  int heldPods = 0;
  // A change for this HPA is in flight (HpaState::promisedMaxReplicas): the planner does not grow
  // or shrink it, but keeps its promise in contention.
  bool inFlight = false;
  // Pods promised and not yet placed: min(wanted, the promised maxReplicas) - heldPods, where the
  // promise is the in-flight change's maxReplicas, else a maxReplicas gpuscale raised; 0 for an
  // HPA gpuscale never raised. Contention reserves them for this HPA (contention.h).
  int promisedPods = 0;
  bool blocked = false;
  BlockReason reason = BlockReason::kNone;  // when blocked
  std::string notBlockedWhy;  // when not blocked: which rule above let the HPA through
  // Contention's order: the policy's priority, else the target's pods' spec.priority.
  WorkloadPriority priority;
  std::optional<CeilingForecast> forecast;  // when anticipation looked at this HPA
  // Snapshot node indices the pods can land on, now or once GFD's product rename matches their
  // nodeSelector (see gpu_product.h); productPins say what the rename must be.
  std::vector<std::size_t> eligibleNodes;
  std::vector<ProductPin> productPins;  // of the pod template's nodeSelector
  std::map<std::size_t, std::int64_t>
      ownUsage;  // node index -> resource used by this target's pods
};

// The HPA controller's replica proposal for `hpa` (see the file comment); `readyPods` <= 0 means
// "use currentReplicas".
int hpaWantedReplicas(const HpaState& hpa, int readyPods, double tolerance);

// Pods that fit on `node` when it offers `capacity` units of the demand's resource (capacity minus
// what other workloads use there, divided by the per-pod request).
int podsFitting(const WorkloadDemand& d, std::size_t nodeIndex, std::int64_t capacity,
                std::int64_t usedOnNode);

// Every HPA managed by `policies` whose target requests an nvidia.com/ resource, sorted by
// namespace/name. HPAs whose target is missing from the snapshot are skipped. Reactive only: no
// anticipation.
std::vector<WorkloadDemand> assessWorkloads(const ClusterSnapshot& snapshot,
                                            const PolicySet& policies);
// The same with anticipation for the policies that enable it, observing the HPAs at `now`.
std::vector<WorkloadDemand> assessWorkloads(const ClusterSnapshot& snapshot,
                                            const PolicySet& policies, TimePoint now);

}  // namespace gpuscale::partition
