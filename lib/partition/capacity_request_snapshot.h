// Requests into the snapshot (private to lib/partition): each GPUCapacityRequest becomes the
// HpaState that stands for it, and a request for a resource also the ScaleTarget its demand is
// counted on (capacity_request.h).
#pragma once

#include <vector>

#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition::detail {

// Appends to snap.hpas and snap.targets (callers sort them afterwards).
void addCapacityRequests(std::vector<CapacityRequest> requests, ClusterSnapshot& snap);

// The pods of a request for a resource: the active pods of its namespace that ask for the
// resource, in namespace/name order.
std::vector<const PodState*> requestPods(const ClusterSnapshot& snap, const ScaleTarget& target);

}  // namespace gpuscale::partition::detail
