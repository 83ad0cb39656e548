// The devices NVIDIA's GPU DRA driver publishes for one node right now, per kind in the planner's
// units (partition/dra_capacity.h: nvidia.com/gpu, nvidia.com/mig-<profile>), read fresh from the
// API rather than from the informers' caches. On a DRA node it stands where node allocatable
// stands on a device-plugin node: a MIG reshape is done when the driver has republished its
// ResourceSlices with the new devices (node_operation.h), and a raise lifts maxReplicas only as
// far as the devices the scheduler can allocate for the new claims (hpa_raise.h).
//
// The node's pool is read as the scheduler reads it (its highest generation, complete or nothing):
// a pool being republished offers nothing yet. Claims are not read: on a static pool this is its
// published devices (a NoSchedule/NoExecute-tainted one not counted); a partitionable pool's is
// what its counters allow with nothing allocated.
//
// Thread safety: a function; the client must be thread-safe.
#pragma once

#include <optional>
#include <string>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::reconciler {

struct PublishedDevices {
  partition::ResourceCounts devices;  // empty while the pool is incomplete
  bool partitionable = false;
};

// nullopt when `node` has no gpu.nvidia.com pool (a device-plugin node) or the cluster does not
// serve, or lets the caller not list, ResourceSlices; an error for any other failed LIST. One LIST
// of the node's slices (field selector spec.nodeName).
core::Result<std::optional<PublishedDevices>> publishedDevices(kube::KubeClient& client,
                                                               const std::string& node);

}  // namespace gpuscale::reconciler
