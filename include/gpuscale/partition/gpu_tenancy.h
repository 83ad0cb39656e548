// Tenants on shared GPUs: who may end up on one GPU once time-slicing or MPS is raised on it.
//
// The device plugin shares a resource node-wide (its config names a resource, not a device), and
// nothing in Kubernetes steers which device of a node a pod gets: once a resource is shared on a
// node, a new pod may land on a device that a pod already placed there uses. So before the planner
// raises sharing of a resource on a node for a workload of namespace N, every pod already placed
// on that node holding the resource must belong to a namespace the workload's policy lets share a
// GPU with N: by default only N itself; the policy's `sharing.acrossNamespaces` lists namespaces
// whose pods may share with one another, and ["*"] lets any namespace share with any (written out
// on purpose, as hpaNamespaces' ["*"]).
//
// A check of its own beside the planner's other sharing checks (replica and memory limits,
// saturation, MPS's rules): each says no for its own reason, and `explain` names the first
// (why_not.h: OtherTenant).
//
// Limits: only pods placed now count. A raise the rule allows still shares the node's devices with
// whatever the scheduler places there later, from any namespace whose pods may run on the node
// (keep tenants' pools apart with nodeSelectors, taints and ResourceQuotas on
// requests.nvidia.com/*). Pods holding devices through DRA claims are not counted (the device
// plugin's sharing does not reach them).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

// Whether pods of namespaces `a` and `b` may share a GPU under `policy` (a namespace always may
// with itself).
bool mayShareGpu(const Policy& policy, std::string_view a, std::string_view b);

// The first namespace, in name order, whose pods hold `base` (an unshared resource name) on `node`
// and may not share a GPU with pods of `ns` under `policy`; "" when there is none.
std::string otherGpuTenant(const NodeState& node, std::string_view base, std::string_view ns,
                           const Policy& policy);

}  // namespace gpuscale::partition
