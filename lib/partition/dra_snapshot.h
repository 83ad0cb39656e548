// DRA in the snapshot (private to lib/partition; the model is dra_capacity.h): buildSnapshot()
// reads the DRA objects and, once nodes, pods and workloads are built, applies them:
//   - a node with a gpu.nvidia.com pool follows a DRA model: its allocatable and used become the
//     pool's capacity and allocations per kind, its devices that capacity (the MIG strategy
//     mixed: the driver publishes every MIG profile as its own kind), with no time-slicing;
//   - a workload whose pod template names ResourceClaimTemplates gets the devices one pod's claims
//     take as its GPU request (ClaimDemand), or a reason why it cannot (ScaleTarget::draProblem);
//   - a pod's GPU requests become the devices its template claims were allocated, and a Pending
//     pod whose claims cannot be allocated is unschedulable for its workload's kind.
#pragma once

#include <vector>

#include "gpuscale/partition/dra_capacity.h"
#include "gpuscale/partition/dra_objects.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition::detail {

struct DraObjects {
  std::vector<ResourceSliceObject> slices;
  std::vector<DeviceClassObject> classes;
  std::vector<ResourceClaimTemplateObject> templates;
  std::vector<ResourceClaimObject> claims;
};

void applyDra(ClusterSnapshot& snapshot, const DraObjects& objects);

}  // namespace gpuscale::partition::detail
