// The Actuator seam: a plan in, Kubernetes API calls out. It is the only code that writes to the
// cluster (besides Events and the HPA status annotation).
//
// KubeActuator acts through the GPU Operator's own interfaces and never blocks on a wait: each call
// advances every operation in flight by one step and starts new ones, and the controller calls it
// again on the next event or resync. An operation's state lives in annotations on its Node
// (intent.h) and, for the HPA side, in the reconciler's state store (hpa_state_store.h), which
// tenants cannot write; each is written before its step, so a restarted reconciler resumes it.
//
// Node operation (one per node at a time, at most maxNodesInFlight nodes):
//   MIG:  intent(prepared) -> the config in the reconciler-owned mig-parted ConfigMap -> taint
//         gpuscale.io/reshape:NoSchedule (k8s::kReshapeTaint), so the scheduler places no new pod
//         there -> GPU users on the node re-checked (PodState::gpuUse; the taint makes this check
//         final, short of a binding already in flight or a pod tolerating every taint) ->
//         label nvidia.com/mig.config flipped + intent(applied) in one write ->
//         wait for nvidia.com/mig.config.state=success and allocatable == the new geometry's
//         resources. The taint is removed in the write that ends the MIG step, whatever its
//         outcome. `failed`: the previous config name is restored, paused
//         nvidia.com/gpu.deploy.* operand labels are set back to "true", the node backs off. No
//         answer within migTimeout: the previous name is restored and the node backs off.
//         A plan that also time-slices the node's new partitions carries that change in the
//         intent (`then`): on success the intent becomes the time-slicing step below, same plan.
//   Time-slicing: intent(prepared) -> the key in the device-plugin ConfigMap -> label
//         nvidia.com/device-plugin.config flipped + intent(applied) -> wait for allocatable;
//         allocatableTimeout: previous label restored, back off.
// HPA: before a plan's node operations start, each HPA the plan raises gets an intent naming the
// nodes (a later plan may lower the intent's target, Plan::promiseCuts, while its pods do not
// exist yet) (in the state store; when none can be recorded, the node operations do not start);
// once all of them have an outcome, maxReplicas is raised to min(planned, what the nodes'
// allocatable now holds for the HPA's pods) — only then, and never above what allocatable shows.
// The store records the time of the change and the maxReplicas before the first raise before the
// HPA is patched: a raise that cannot be recorded is not made.
// Lowering maxReplicas (scale-in) happens at once, never below the HPA's current replicas.
// A node intent is acted on only when nodeIntentOwnedBy() holds; an HPA intent reads only nodes
// the snapshot knows.
// Every write is a merge patch with the read resourceVersion, retried on 409 (optimistic_write.h).
// A write that keeps failing across passes is logged once until it succeeds (degraded_log.h).
//
// Thread safety: apply() is called from one thread at a time.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/degraded_log.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/gpu_pod_mapping.h"
#include "gpuscale/reconciler/hpa_state_store.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {

struct ActuatorOptions {
  std::string operatorNamespace = "gpu-operator";
  std::string migConfigMap = "gpuscale-mig-parted-config";  // ClusterPolicy migManager.config.name
  std::string defaultMigConfigMap = "default-mig-parted-config";
  std::string devicePluginConfigMap = "device-plugin-config";  // ClusterPolicy devicePlugin.config
  int maxNodesInFlight = 1;
  std::chrono::seconds migTimeout{600};
  std::chrono::seconds allocatableTimeout{300};
  std::chrono::seconds failureBackoff{900};
};

// What the actuator sees of the cluster in one pass (built by the controller from its caches).
struct ClusterState {
  const partition::ClusterSnapshot* snapshot = nullptr;
  const std::vector<partition::WorkloadDemand>* workloads = nullptr;  // every managed HPA
  std::set<std::string> nodesWithIntent;
  std::set<std::pair<std::string, std::string>> hpasWithIntent;  // namespace, name
  // Where the HPA-side state lives (loaded for this pass); null: no HPA is changed.
  HpaStateStore* store = nullptr;
};

struct ActionOutcome {
  std::string kind;     // mig | timeSlicing | maxReplicas
  std::string outcome;  // started | success | failed | timeout | aborted | superseded | error
};

// A node change that succeeded: its lever, the node and the seconds from its start to the new
// allocatable (fed back as anticipation's lead time, partition/lead_time.h).
struct LeverTiming {
  partition::Lever lever = partition::Lever::kMigReshape;
  std::string node;
  double seconds = 0;
};

struct ActuationReport {
  std::vector<ActionOutcome> outcomes;
  int nodesInFlight = 0;
  std::vector<double> ceilingToCapacitySeconds;
  std::vector<LeverTiming> leverSeconds;
};

class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual ActuationReport apply(const partition::Plan& plan, const ClusterState& state,
                                TimePoint now) = 0;
};

class KubeActuator final : public Actuator {
 public:
  KubeActuator(std::shared_ptr<kube::KubeClient> client, std::shared_ptr<EventRecorder> events,
               std::shared_ptr<GpuPodMapping> gpuPods, ActuatorOptions options,
               std::shared_ptr<ReconcilerMetrics> metrics = nullptr);

  ActuationReport apply(const partition::Plan& plan, const ClusterState& state,
                        TimePoint now) override;

  // Advances one node's operation (exposed for tests). True while it is still in flight.
  bool advanceNode(const std::string& node, TimePoint now, ActuationReport& report);

  // One node's operation derived from a plan (defined with the implementation).
  struct NodeWork;

 private:
  bool startNode(const NodeWork& work, const std::string& plan, TimePoint now,
                 ActuationReport& report);
  bool advanceHpa(const std::string& ns, const std::string& name, const ClusterState& state,
                  TimePoint now, ActuationReport& report);
  bool raiseMaxReplicas(const std::string& ns, const std::string& name, int from, int to,
                        const std::string& plan, const ClusterState& state, TimePoint now,
                        ActuationReport& report);
  void lowerMaxReplicas(const partition::SetMaxReplicas& change, const ClusterState& state,
                        TimePoint now, ActuationReport& report);
  // Lowers the `to` of the HPA's intent in flight as `cut` says (never below the intent's `from`);
  // an Event says so. Nothing when the intent is gone or already at or below the cut.
  void cutPromise(const partition::PromiseCut& cut, const ClusterState& state);
  // Records `intent` for the HPA in the state store (kept when one is there already). True when
  // an intent is recorded.
  bool writeHpaIntent(const partition::SetMaxReplicas& change, const HpaIntent& intent,
                      const ClusterState& state);
  // Writes `intent`'s config for `node` and prunes the node's own earlier entries.
  core::Status writeConfig(const std::string& node, const NodeIntent& intent);
  core::Status writeMigConfig(const std::string& node, const NodeIntent& intent);
  core::Status writeDevicePluginConfig(const std::string& node, const NodeIntent& intent);
  // Puts k8s::kReshapeTaint on `node` while its intent is still `intent` (nothing to do otherwise).
  core::Status taintForReshape(const std::string& node, const NodeIntent& intent);
  // A pod that would be disturbed by rebuilding `gpus` of `node`, or "" when none.
  core::Result<std::string> podInTheWay(const std::string& node, const std::vector<int>& gpus,
                                        TimePoint now);
  // A MIG change that succeeded continues as its follow-up time-slicing change (same plan).
  bool continueWithTimeSlicing(const std::string& node, const NodeIntent& mig, TimePoint now,
                               ActuationReport& report);
  void finishNode(const std::string& node, const NodeIntent& intent, const std::string& result,
                  const std::string& message, bool revert, bool backoff, TimePoint now,
                  ActuationReport& report);

  std::shared_ptr<kube::KubeClient> client_;
  std::shared_ptr<EventRecorder> events_;
  std::shared_ptr<GpuPodMapping> gpuPods_;
  ActuatorOptions options_;
  DegradedLog degraded_;
  std::string waitingLogged_;  // the last "plan waits" line, so a wait is logged once
  // Operations started by this process whose annotations the caches may not show yet.
  std::set<std::string> startedNodes_;
  std::set<std::pair<std::string, std::string>> startedHpas_;
  uint64_t planCounter_ = 0;
};

// Allocatable-based ceiling: pods of `demand` the nodes' allocatable (not the planned geometry) can
// hold now, given what other pods use.
int allocatableCeiling(const partition::WorkloadDemand& demand,
                       const partition::ClusterSnapshot& snapshot);

}  // namespace gpuscale::reconciler
