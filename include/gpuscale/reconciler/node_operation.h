// The node half of the actuator: one operation per node, run as the state machine of
// node_transitions.h. Each call observes the operation on a fresh read of its Node (through
// partition/kube_objects.h), looks up the one transition for (phase, kind, observation) and
// performs its writes; it never waits.
//
// The steps of a phase:
//   start:    the intent annotation (phase prepared, the label's previous value) is written first,
//             only when the node has no intent and mig-manager is not pending, rebooting or failed;
//             a MIG change first re-checks that no pod uses the GPUs it rebuilds (ReshapeSkipped).
//   prepared: the config entry (the reconciler's mig-parted ConfigMap, or a key of the
//             device-plugin ConfigMap; the node's own stale entries pruned by exact ownership,
//             stock configs carried over); for MIG the reshape taint, then the GPU users re-checked
//             (PodState::gpuUse, and the per-GPU mapping when it answers); then the label flip and
//             the intent's phase `applied` in one write (MIG: with the give-back record).
//   applied:  observeApplied() against the node's labels and allocatable (of a MIG step on a DRA
//             node, the devices its driver publishes now: published_devices.h).
// A finish removes the intent, writes the outcome annotation, restores the label or backs off as
// the transition says, unpauses operands for a failed MIG step, and removes the reshape taint, in
// one write guarded by the intent's plan; its Event is <Kind>Succeeded|Failed|TimedOut|Aborted.
// A follow-up turns a finished MIG step's intent into its time-slicing step (same plan).
// A node intent the reconciler could not have written (intent.h: nodeIntentOwnedBy) is never acted
// on, and a reshape taint no live intent owns is removed (removeOrphanTaint). A MIG change starts
// only on a node whose mig-manager reports a state. A write that keeps failing is logged once
// until it succeeds (degraded_log.h).
//
// Thread safety: one thread at a time (the actuator's).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/degraded_log.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/gpu_pod_mapping.h"
#include "gpuscale/reconciler/intent.h"
#include "gpuscale/reconciler/node_transitions.h"

namespace gpuscale::reconciler {

// One node's operation derived from a plan: its intent (plan, started and previous are filled in
// when it starts).
struct NodeWork {
  std::string node;
  NodeIntent intent;
  bool dra = false;  // a DRA node: its Events name the published devices, not allocatable
};

// One operation per node: the plan's MIG change if it has one, carrying the node's time-slicing
// changes as its follow-up (NodeIntent::then), else its time-slicing changes combined into one
// config. Nodes the snapshot does not know are left out.
std::vector<NodeWork> nodeWorkFor(const partition::Plan& plan,
                                  const partition::ClusterSnapshot& snapshot);

class NodeOperations {
 public:
  NodeOperations(std::shared_ptr<kube::KubeClient> client, std::shared_ptr<EventRecorder> events,
                 std::shared_ptr<GpuPodMapping> gpuPods, ActuatorOptions options,
                 std::shared_ptr<ReconcilerMetrics> metrics = nullptr);

  // Records `work`'s intent for plan `plan` and takes its first step. True while in flight.
  bool start(const NodeWork& work, const std::string& plan, TimePoint now, ActuationReport& report);
  // Advances `node`'s operation by one transition. True while it is still in flight.
  bool advance(const std::string& node, TimePoint now, ActuationReport& report);
  // Removes the reshape taint from `node` when, on a fresh read, no live operation owns it
  // (node_transitions.h: none/any/orphan-taint): a Warning Event ReshapeTaintRemoved and the
  // stall in `report`. True when it removed one.
  bool removeOrphanTaint(const std::string& node, ActuationReport& report);
  // Operations this process started that the caches may not show yet.
  const std::set<std::string>& started() const { return started_; }

 private:
  // The prepared phase's writes; answers PodInTheWay (with the pod), StepFailed or Prepared.
  std::pair<NodeOpEvent, std::string> prepare(const std::string& node, const NodeIntent& intent,
                                              TimePoint now);
  // Flips the label and records phase `applied`. True when written.
  bool applyLabel(const std::string& node, const NodeIntent& intent, TimePoint now,
                  const EventTarget& target);
  // `dra`: the node's capacity is the devices its driver publishes (the Event names them).
  bool followUp(const std::string& node, const NodeIntent& mig, bool dra, TimePoint now,
                ActuationReport& report);
  void finish(const std::string& node, const NodeIntent& intent, const NodeTransition& t,
              const std::string& message, TimePoint now, ActuationReport& report);

  // The config entry of `intent` for `node` (and the node's stale entries pruned).
  // Each: whether the ConfigMap changed.
  core::Result<bool> writeConfig(const std::string& node, const NodeIntent& intent);
  core::Result<bool> writeMigConfig(const std::string& node, const NodeIntent& intent);
  core::Result<bool> writeDevicePluginConfig(const std::string& node, const NodeIntent& intent);
  // Records in the node's intent when its MIG config went into the ConfigMap.
  core::Status recordConfigWritten(const std::string& node, const NodeIntent& intent,
                                   TimePoint now);
  // Puts k8s::kReshapeTaint on `node` while its intent is still `intent`.
  core::Status taintForReshape(const std::string& node, const NodeIntent& intent);
  // A pod that would be disturbed by rebuilding `gpus` of `node`, or "" when none.
  core::Result<std::string> podInTheWay(const std::string& node, const std::vector<int>& gpus,
                                        TimePoint now);

  std::shared_ptr<kube::KubeClient> client_;
  std::shared_ptr<EventRecorder> events_;
  std::shared_ptr<GpuPodMapping> gpuPods_;
  ActuatorOptions options_;
  NodeOpTimeouts timeouts_;
  DegradedLog degraded_;
  std::set<std::string> started_;
};

}  // namespace gpuscale::reconciler
