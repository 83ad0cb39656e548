// What keeps the planner's lever choice independent of timing. Two facts about a node that a
// caller with GPU metrics (the reconciler's dcgm-exporter mapping) records in the snapshot:
//
// - The per-GPU mapping is settling (NodeState::gpuMappingSettling): some GPU looks idle, but
//   pods that started moments ago are not in the metrics yet and could hold it. Choosing a lever
//   now would rest on the worst-case view (every GPU busy), which rules out the reshape and leaves
//   time-slicing; once time-slicing has raised the ceiling the reshape never comes. So a workload
//   that could reshape such a node waits for the mapping (the caller bounds the wait and then
//   stops reporting the node as settling: it is all busy, as without a mapping).
//
// - The devices are saturated (NodeState::utilization at or above the policy's
//   timeSlicing.saturation): another time-slicing replica on a device that is already ~90 % busy
//   adds a pod but no throughput. Time-slicing such a node is the last resort: only when no
//   reshape added capacity for the workload in the same plan, whatever the order of the levers,
//   and the workload's running pods fill the partitions it already has (right after a reshape
//   the new slices are free until the pods land there, and time-slicing then would only let new
//   pods queue on the saturated devices' replicas).
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

// Whether a workload under `policy` should wait for node `n`'s per-GPU mapping before choosing a
// lever: the mapping is settling and the policy could reshape the node (migReshape listed, the
// node selected, MIG-managed and not in a MIG transition, the mixed strategy: the only one that
// rebuilds some GPUs of a node while others hold pods).
bool waitsForGpuMapping(const NodeState& n, const Policy& policy);

// Whether time-slicing `base` (an unshared resource name) on node `n` would share devices whose
// measured utilisation (the mean over the devices that hold pods) is at or above the policy's
// saturation. Unknown utilisation: false.
bool saturatedForTimeSlicing(const NodeState& n, std::string_view base, const Policy& policy);

}  // namespace gpuscale::partition
