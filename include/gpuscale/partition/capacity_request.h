// Capacity requests: how a planner that computes replicas itself (NVIDIA Dynamo's planner, llm-d's
// variant autoscaler) asks for GPU partitions before it scales. A namespaced custom resource,
// `gpuscale.io/v1alpha1` `GPUCapacityRequest`:
//
//   spec:
//     workloadRef: {apiVersion: apps/v1, kind: Deployment, name: triton}  # exactly one of these
//     resource: nvidia.com/mig-1g.5gb                                     # two
//     replicas: 8          # wanted: pods of the workload, or partitions of the resource (>= 0)
//     priority: 100        # optional int32; see requestPriority below
//   status:
//     grantedReplicas: 8   # what the reconciler holds for the request
//     observedGeneration: 3
//     conditions: [{type: Granted, status: "True"|"False", reason, message, ...}]
//
// The reconciler plans a request as a demand, beside the HPAs and under the same contention rule
// (contention.h): a request for N replicas of a workload wants N pods of the workload's per-pod
// GPU request, on the nodes its pod template selects; a request for a resource wants N partitions
// (N units of that resource) on any node that offers it, and the pods of the request's namespace
// that ask for the resource count as its own. The snapshot turns each request into an HpaState
// (HpaState::capacityRequest) whose maxReplicas is the granted count, so the planner's levers,
// promises, contention, `explain` and the actuator's raise (which writes the status instead of an
// HPA's maxReplicas) work on requests unchanged. Such an HpaState's name is
// capacityRequestHpaName(name): no HPA can have it (an HPA's name is a DNS subdomain, without
// upper-case letters), so its state-store entry and plan actions never collide with an HPA's.
//
// A request is managed by the policy that would manage an HPA with its namespace, labels and
// annotations (`gpuscale.io/partition-policy`), like an HPA.
//
// Thread safety: values; pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/workload_priority.h"

namespace gpuscale::partition {

inline constexpr std::string_view kCapacityRequestKind = "GPUCapacityRequest";
inline constexpr std::string_view kCapacityRequestGroup = "gpuscale.io";
inline constexpr std::string_view kCapacityRequestVersion = "v1alpha1";
inline constexpr std::string_view kCapacityRequestResource = "gpucapacityrequests";
// The status condition the reconciler writes, and its reasons.
inline constexpr std::string_view kGrantedCondition = "Granted";

struct CapacityRequestCondition {
  std::string type, status, reason, message;
  friend bool operator==(const CapacityRequestCondition&,
                         const CapacityRequestCondition&) = default;
};

struct CapacityRequest {
  ObjectMeta meta;
  std::int64_t generation = 0;
  // spec.workloadRef (kind and name set) or spec.resource, never both.
  std::string workloadApiVersion, workloadKind, workloadName;
  std::string resource;
  int replicas = 0;
  std::optional<int> priority;  // spec.priority
  // status
  int grantedReplicas = 0;
  std::int64_t observedGeneration = 0;
  std::vector<CapacityRequestCondition> conditions;
  bool forResource() const { return !resource.empty(); }
};

// A GPUCapacityRequest. Errors (Status::invalid naming the field, like every reader of
// kube_objects.h): a field of the wrong type; neither or both of spec.workloadRef and
// spec.resource; a workloadRef without kind or name; a resource outside `nvidia.com/`; replicas
// or status.grantedReplicas below 0 or beyond int32. The snapshot skips such a request (reason
// "malformed") and the reconciler answers it with Granted False, reason Invalid.
core::Result<CapacityRequest> readCapacityRequest(const nlohmann::json& object);

struct HpaState;

// The HpaState that stands for `request` in a snapshot (file comment): name
// capacityRequestHpaName(request name), minReplicas 0, maxReplicas (and current and desired
// replicas) the granted count, the target its workload (or the request itself, for a resource).
HpaState capacityRequestHpa(std::shared_ptr<const CapacityRequest> request);

// The name of the HpaState that stands for request `name` (file comment):
// "GPUCapacityRequest.<name>"; and back (nullopt for any other name).
std::string capacityRequestHpaName(std::string_view name);
std::optional<std::string> capacityRequestName(std::string_view hpaName);
// How plans and `explain` name what a demand belongs to: "HPA ns/name", or
// "GPUCapacityRequest ns/name" for the HpaState of a request.
std::string demandOwnerName(std::string_view ns, std::string_view hpaName);

// A request's priority in contention, following the HPAs' rule (workload_priority.h): the
// policy's `priority` when it gives one; otherwise the request's spec.priority (0 when unset),
// but never above what priority admission gave the pods the request is for (the lowest
// spec.priority of `pods`, when there are any): a tenant who may write requests cannot outrank the
// PriorityClass its pods were admitted with.
WorkloadPriority requestPriority(const Policy& policy, const CapacityRequest& request,
                                 const std::vector<const PodState*>& pods);

// What the status says of a request, from the granted count the pass leaves it with.
struct CapacityRequestVerdict {
  int granted = 0;
  CapacityRequestCondition condition;  // type Granted
};

// The Granted condition for a request that wants `wanted` and holds `granted`:
//   True  Granted           granted >= wanted
//   False PartiallyGranted  0 < granted < wanted, nothing more coming
//   False WaitingForReshape a node operation for it runs (`inFlight`) or this pass starts one
//                           (`changing`)
//   False Unsatisfiable     granted 0 and nothing more coming (no partitions, no lever)
// `why` (the planner's verdict, why_not.h) ends the message when the request is short.
CapacityRequestVerdict capacityRequestVerdict(int wanted, int granted, bool inFlight, bool changing,
                                              std::string_view why);
// Granted False, reason Invalid, with the reader's message.
CapacityRequestVerdict invalidCapacityRequest(std::string_view message);

}  // namespace gpuscale::partition
