// The HPA half of the actuator: a raise of maxReplicas waits in the state store (an intent naming
// its plan's nodes) until every node operation has an outcome, then raises maxReplicas to what the
// nodes' allocatable holds, read fresh through partition/kube_objects.h (on a static DRA node the
// devices its driver publishes now, published_devices.h: the scheduler can place the new claims);
// a lower is made at once.
// The ceiling is written where it holds: the HPA's spec.maxReplicas, or, for an HPA a KEDA
// ScaledObject owns (its controller owner reference), that ScaledObject's spec.maxReplicaCount
// (KEDA copies it into the HPA and would undo a write to the HPA); Events name the field written.
// Contract details: actuator.h ("HPA raises"). Events: PartitionsRequested, PromiseReduced,
// PartitionChangeIncomplete, MaxReplicasRaised, MaxReplicasUnchanged, MaxReplicasLowered.
//
// Thread safety: one thread at a time (the actuator's).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "gpuscale/kube/client.h"
#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/degraded_log.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {

struct CeilingRef;  // ceiling_holder.h

class HpaRaise {
 public:
  HpaRaise(std::shared_ptr<kube::KubeClient> client, std::shared_ptr<EventRecorder> events,
           std::shared_ptr<ReconcilerMetrics> metrics = nullptr);

  // Records `intent` for the HPA of `change` in the state store (kept when one is there already).
  // True when an intent is recorded.
  bool recordIntent(const partition::SetMaxReplicas& change, const HpaIntent& intent,
                    const ClusterState& state);
  // Lowers the `to` of the HPA's intent in flight as `cut` says (never below the intent's `from`);
  // an Event says so. Nothing when the intent is gone or already at or below the cut.
  void cutPromise(const partition::PromiseCut& cut, const ClusterState& state);
  // A raise in flight: once every node of its intent has an outcome for its plan, raises
  // maxReplicas (PartitionChangeIncomplete names the nodes that gave nothing). True while it waits.
  bool advance(const std::string& ns, const std::string& name, const ClusterState& state,
               TimePoint now, ActuationReport& report);
  // Raises maxReplicas towards `to` as far as the allocatable of the demand's nodes holds, and ends
  // the intent of plan `plan`. True when maxReplicas grew.
  bool raise(const std::string& ns, const std::string& name, int from, int to,
             const std::string& plan, const ClusterState& state, TimePoint now,
             ActuationReport& report);
  void lower(const partition::SetMaxReplicas& change, const ClusterState& state, TimePoint now,
             ActuationReport& report);
  // Raises this process recorded that the caches may not show yet.
  std::set<std::pair<std::string, std::string>>& started() { return started_; }

 private:
  // The ceiling `holder` holds now (a fresh read).
  core::Result<int> readCeiling(const CeilingRef& holder);

  std::shared_ptr<kube::KubeClient> client_;
  std::shared_ptr<EventRecorder> events_;
  DegradedLog degraded_;
  std::set<std::pair<std::string, std::string>> started_;
};

// Allocatable-based ceiling: replicas of `demand` (pods, or whole groups of the target's
// podsPerReplica pods) the nodes' allocatable (not the planned geometry) can hold now, given what
// other pods use.
int allocatableCeiling(const partition::WorkloadDemand& demand,
                       const partition::ClusterSnapshot& snapshot);

}  // namespace gpuscale::reconciler
