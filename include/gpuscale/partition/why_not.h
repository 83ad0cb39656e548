// Why the planner did or did not raise an HPA: the verdicts it reached for one managed HPA while
// planning, as data. The planner records them itself (planner.h: Plan::why), so the answer to "why
// was my HPA not raised?" is what the planner decided, not a second reading of the cluster.
//
// One HpaWhy per managed HPA of a plan, with the numbers the decision turned on (maxReplicas, the
// partition ceiling, the HPA's unclamped wish, the policy's cap, the aim, the ceiling after the
// plan) and the reasons in the order the planner met them. A reason is either about the HPA as a
// whole (node == "") or about one node and one lever. Codes are stable, machine-readable
// identifiers (the JSON carries their names); the detail is a sentence for people.
//
// clang-format off
// HPA-wide codes:
//   NotBlocked          the HPA is not held by GPU partitions (the detail says which rule of
//                       demand.h let it through: not at maxReplicas, ScalingActive False, its own
//                       maxReplicas below the partitions, no forecast)
//   ScaleUpCooldown     gpuscale changed it less than the policy's cooldown.scaleUp ago
//   WaitingForMapping   pods that just started are not in a node's per-GPU metrics yet: no lever
//                       is chosen until the mapping settles (lever_choice.h; the node is named)
//   AtPolicyCap         the aim is bounded by the policy's maxReplicas cap (hard or factor)
//   NoEligibleNodes     no schedulable node matches the pods' nodeSelector
//   Shortfall           the levers left the partitions below the aim
//   Shared              the HPA competes for the same nodes: raised only to its share
//   Raised / Lowered    the plan changes maxReplicas (from -> to)
// Per-node codes (lever in parentheses when only one applies):
//   NodeMigTransition   a MIG change is pending/rebooting/failed, or operands are paused
//   NodeOperationInFlight  gpuscale's own operation runs there (gpuscale.io/intent)
//   NodeBackoff         a failed operation backs off until the time given (and how it ended:
//                       mig-manager failed, stuck, silent, ...)
//   NodeNotSelected     outside the policy's nodeSelector
//   NotMigCapable (migReshape)        no MIG-capable GPU model recognised
//   MigNotManaged (migReshape)        no mig-manager reports the node's MIG state (no
//                                     nvidia.com/mig.config.state, or an empty one): nothing
//                                     would apply a MIG config, so the node is never reshaped
//                                     nor tainted
//   MigGeometryUnknown (migReshape)   the node's per-GPU layout does not resolve
//   MigDisabled (migReshape)          MIG strategy none, or no GPU with MIG enabled
//   MigModeOff (migReshape)           an idle GPU has MIG disabled and the policy's
//                                     migModeChange is off (enabling MIG resets the node's GPUs)
//   MigModeBusyNode (migReshape)      an idle GPU has MIG disabled, but the node holds GPU pods
//                                     and a mode change resets every GPU of the node
//   GpuPodsOnNode (migReshape)        single strategy with GPU pods (the node changes as a whole)
//   GpusBusy (migReshape)             every MIG GPU holds pods: by the per-GPU mapping, or by the
//                                     node-level rule when the mapping has no answer (fallback)
//   ProfileNotAllowed (migReshape)    the pods' resource is no profile the policy lets a reshape
//                                     make
//   NoReshapeGain (migReshape)        no allowed geometry of an idle GPU adds a pod
//   Reshaped (migReshape)             the plan reshapes GPUs there (+pods)
//   Mps                               time-slicing: the node shares by MPS, which time-slicing
//                                     does not change; MPS: why the node cannot share by MPS
//   NoDevices                         the node offers no device of the pods' resource
//   ReplicaLimit                      at the policy's maxReplicas per device
//   MemoryLimit                       more replicas would leave a pod less GPU memory than it
//                                     takes: partition memory / perPodGpuMemory, or what the pods
//                                     preallocate (gpu_memory_need.h: vLLM's
//                                     --gpu-memory-utilization, the gpuscale.io/gpu-memory
//                                     annotations), of the workload or of pods already there
//   MemoryUnknown                     perPodGpuMemory (or a gpuscale.io/gpu-memory annotation) is
//                                     set but the partition's memory is unknown, or the memory a
//                                     pod takes is unknown (the lever is refused, not guessed)
//   ProductRename                     GPU Feature Discovery's rename would unmatch the nodeSelector
//   Saturated                         the devices are saturated (utilisation at or above the
//                                     policy's saturation): shared only as the last resort, after
//                                     a reshape and once the pods fill what they have
//   OtherTenant                       pods of a namespace the policy does not let share GPUs with
//                                     the HPA's hold the resource there (partition/gpu_tenancy.h)
//   DraPartitionable (migReshape)     the node's GPUs are partitionable devices of the DRA
//                                     driver: it creates a MIG device when the scheduler
//                                     allocates one, so there is nothing to reshape (the free
//                                     counters are the ceiling)
//   DraNoSharing                      the node offers its GPUs through DRA: node-wide
//                                     time-slicing and MPS (device-plugin configs) do not apply
//   NoTimeSlicingGain                 more replicas add no pod there
//   TimeSliced                        the plan raises replicas there (+pods)
// clang-format on
//
// Thread safety: values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/partition/policy.h"

namespace gpuscale::partition {

enum class WhyCode {
  kNotBlocked,
  kScaleUpCooldown,
  kWaitingForMapping,
  kAtPolicyCap,
  kNoEligibleNodes,
  kShortfall,
  kShared,
  kRaised,
  kLowered,
  kNodeMigTransition,
  kNodeOperationInFlight,
  kNodeBackoff,
  kNodeNotSelected,
  kNotMigCapable,
  kMigGeometryUnknown,
  kMigDisabled,
  kGpuPodsOnNode,
  kGpusBusy,
  kProfileNotAllowed,
  kNoReshapeGain,
  kReshaped,
  kMps,
  kNoDevices,
  kReplicaLimit,
  kMemoryLimit,
  kMemoryUnknown,
  kProductRename,
  kSaturated,
  kNoTimeSlicingGain,
  kTimeSliced,
  kMigModeOff,
  kMigModeBusyNode,
  kMigNotManaged,
  kOtherTenant,
  kDraPartitionable,
  kDraNoSharing,
};

// "NotBlocked", "ScaleUpCooldown", ... (the names in the file comment).
std::string_view whyCodeName(WhyCode code);

struct WhyReason {
  WhyCode code = WhyCode::kNotBlocked;
  std::string node;            // "" for a reason about the HPA as a whole
  std::optional<Lever> lever;  // the lever a node reason is about, when one
  std::string detail;
};

struct HpaWhy {
  std::string ns, name, policy, resource;
  bool blocked = false;
  std::string demand;  // when blocked: TooManyReplicas | Unschedulable | Anticipated
  int maxReplicas = 0;
  int ceiling = 0;  // pods the partitions hold now
  int wanted = 0;   // the HPA formula, unclamped
  // Set when the planner tried to grow the HPA (blocked and out of cooldown).
  std::optional<int> cap;             // the policy's maxReplicas cap
  std::optional<int> aim;             // min(wanted, cap)
  std::optional<int> after;           // the ceiling once the plan is applied
  std::optional<int> newMaxReplicas;  // when the plan changes maxReplicas
  std::vector<WhyReason> reasons;

  bool has(WhyCode code) const;
};

// JSON: {"namespace","name","policy","resource","blocked","demand","maxReplicas","ceiling",
// "wanted","cap","aim","after","newMaxReplicas","verdict","reasons":[{"code","node","lever",
// "detail"}]} (absent optionals and empty strings are left out).
nlohmann::ordered_json whyToJson(const HpaWhy& why);
// A one-line answer: "raised maxReplicas 7 -> 28", "not raised: <the deciding reason>", or
// "partitions grow within maxReplicas N; not raised: ..." when the plan adds partitions for pods
// the HPA already asks for without raising it.
std::string whyVerdict(const HpaWhy& why);
// The verdict, the numbers, then one line per reason.
std::string whyToText(const HpaWhy& why);

}  // namespace gpuscale::partition
