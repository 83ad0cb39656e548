// The Actuator seam: a plan in, Kubernetes API calls out. It is the only code that writes to the
// cluster (besides Events and the HPA status annotation).
//
// KubeActuator acts through the GPU Operator's own interfaces and never blocks on a wait: each call
// advances every operation in flight by one step and starts new ones, and the controller calls it
// again on the next event or resync. An operation's state lives in annotations on its Node
// (intent.h) and, for the HPA side, in the reconciler's state store (hpa_state_store.h), which
// tenants cannot write; each is written before its step, so a restarted reconciler resumes it.
//
// Node operations (node_operation.h), one per node at a time and at most maxNodesInFlight nodes,
// run as the state machine of node_transitions.h:
//   MIG:  intent(prepared) -> the config in the reconciler-owned mig-parted ConfigMap (a config
//         it adds there is given migConfigPropagation to reach mig-manager's file) -> taint
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
// HPA raises (hpa_raise.h): before a plan's node operations start, each HPA the plan raises gets
// an intent naming the nodes (a later plan may lower the intent's target, Plan::promiseCuts, while
// its pods do not exist yet) (in the state store; when none can be recorded, the node operations
// do not start); once all of them have an outcome, maxReplicas is raised to min(planned, what the
// nodes' allocatable now holds for the HPA's pods) — only then, and never above what allocatable
// shows. The store records the time of the change and the maxReplicas before the first raise
// before the HPA is patched: a raise that cannot be recorded is not made.
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
#include "gpuscale/reconciler/reconciler_metrics.h"

namespace gpuscale::reconciler {

struct ActuatorOptions {
  std::string operatorNamespace = "gpu-operator";
  std::string migConfigMap = "gpuscale-mig-parted-config";  // ClusterPolicy migManager.config.name
  std::string defaultMigConfigMap = "default-mig-parted-config";
  std::string devicePluginConfigMap = "device-plugin-config";  // ClusterPolicy devicePlugin.config
  int maxNodesInFlight = 1;
  std::chrono::seconds migTimeout{600};
  // How long after a MIG config first goes into the mig-parted ConfigMap the node's label is
  // flipped: mig-manager reads the ConfigMap as a mounted file, which the kubelet refreshes within
  // its sync period (about a minute). 0: at once (a mig-manager that reads the API, the emulator).
  std::chrono::seconds migConfigPropagation{0};
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

// What an action changed: a node's MIG or sharing config, or an HPA's maxReplicas.
enum class ActionKind { kMig, kTimeSlicing, kMps, kMaxReplicas };
std::string_view actionKindName(ActionKind kind);  // mig | timeSlicing | mps | maxReplicas
ActionKind actionKindOf(NodeOpKind kind);

struct ActionOutcome {
  ActionKind kind = ActionKind::kMig;
  Outcome outcome = Outcome::kStarted;
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
  // Stalls undone in this pass, by cause (node_transitions.h: NodeTransition::stall).
  std::vector<std::string> stalls;
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

class NodeOperations;
class HpaRaise;

// The actuator of the reconciler: each apply() advances the operations in flight, then starts the
// plan's (within maxNodesInFlight) once the HPA intents are recorded.
class KubeActuator final : public Actuator {
 public:
  KubeActuator(std::shared_ptr<kube::KubeClient> client, std::shared_ptr<EventRecorder> events,
               std::shared_ptr<GpuPodMapping> gpuPods, ActuatorOptions options,
               std::shared_ptr<ReconcilerMetrics> metrics = nullptr);
  ~KubeActuator() override;

  ActuationReport apply(const partition::Plan& plan, const ClusterState& state,
                        TimePoint now) override;

 private:
  ActuatorOptions options_;
  std::unique_ptr<NodeOperations> nodes_;
  std::unique_ptr<HpaRaise> hpas_;
  std::string waitingLogged_;  // the last "plan waits" line, so a wait is logged once
  uint64_t planCounter_ = 0;
};

}  // namespace gpuscale::reconciler
