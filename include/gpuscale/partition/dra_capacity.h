// GPU capacity that NVIDIA's GPU DRA driver (`gpu.nvidia.com`) publishes, in the planner's terms.
//
// The planner counts partitions per kind of device, the names the device plugin uses for the
// same hardware: a whole GPU (`type: gpu`) is `nvidia.com/gpu`, a MIG device (`type: mig`) of
// profile P is `nvidia.com/mig-<P>` (resource_names.h). So a DRA node reads like a mixed-strategy
// node whose "allocatable" is what the driver published, and the levers that apply to it (a MIG
// reshape through mig-manager, after which the driver publishes the new devices) work unchanged;
// the levers that do not (node-wide time-slicing and MPS: the driver shares a device only between
// the pods of one claim, per the claim's configuration) are refused by the planner for DRA nodes.
//
// A node's pool (one per node, named after it) is read as the scheduler reads it: only the slices
// of its highest generation count, and only once all of them (resourceSliceCount) are there; an
// incomplete pool publishes nothing. Devices allocated by any ResourceClaim are used.
//   static pool (no counters): capacity of a kind = its published devices (a tainted one only
//   while allocated: claim tolerations are not modelled);
//   partitionable pool (KEP-4815, the driver's DynamicMIG): devices consume shared counters, so
//   capacity of a kind = its allocated devices + how many more the counters the allocated devices
//   leave still allow, counted greedily in the pool's device order (what one placement takes is
//   not available to an overlapping one). Nothing to reshape: the driver creates the MIG device
//   when it allocates it.
//
// A workload's pods claim devices through ResourceClaimTemplates: ClaimDemand resolves what one
// pod's claims take. Its requests' DeviceClass selectors and own selectors (dra_cel.h) are
// evaluated against every published device and against the MIG devices a reshape of the DRA
// nodes' GPUs would publish (the exemplars); when they accept exactly one kind and every published
// device of that kind, the pods ask for that kind (one unit per device). A claim that selects
// some devices of a kind but not others (a pinned GPU, a PCI root) or several kinds is counted
// under a kind of its own (ClaimDemand::resource "dra:<namespace>/<workload>") from the devices it
// matches: its ceiling is right, but no reshape can be planned for it. What the planner cannot
// model is a reason (ClaimDemand::problem) and the workload is not planned: a selector outside the
// CEL subset, firstAvailable, allocationMode All, consumable capacity, constraints across requests,
// a missing template or class, pods that share one named claim.
//
// Thread safety: pure functions and values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpuscale/partition/dra_cel.h"
#include "gpuscale/partition/dra_objects.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

struct DraPool {
  std::string name;  // the node's name
  std::int64_t generation = 0;
  std::int64_t slices = 0;      // slices of that generation present
  std::int64_t sliceCount = 0;  // slices the pool declares for that generation
  std::vector<DraDevice> devices;
  std::map<std::string, std::map<std::string, std::int64_t>> counterSets;
  std::set<std::string> allocated;  // names of devices some claim holds
  bool complete() const { return sliceCount > 0 && slices == sliceCount; }
  bool partitionable() const;  // some device consumes counters
  // "pool generation 3: 7 devices, 2 allocated", "... (incomplete: 1 of 2 slices)", with the
  // counter sets of a partitionable pool.
  std::string describe() const;
};

// The kind the planner counts `device` as: "nvidia.com/gpu" for `type: gpu`, the MIG resource of
// its `profile` for `type: mig`, "" otherwise.
std::string draDeviceKind(const DraDevice& device);

// The gpu.nvidia.com pools of `slices`, keyed by node name (slices local to a node only), with the
// devices `claims` allocated marked.
std::map<std::string, DraPool> draPools(const std::vector<ResourceSliceObject>& slices,
                                        const std::vector<ResourceClaimObject>& claims);

// Devices of `pool` that `match` accepts and the scheduler could allocate now (see the file
// comment): not allocated, not tainted (NoSchedule/NoExecute), and, on a partitionable pool, what
// the counters left by the allocated devices still allow; 0 for an incomplete pool.
std::int64_t allocatableDevices(const DraPool& pool,
                                const std::function<bool(const DraDevice&)>& match);

// Capacity per kind (the file comment): what the planner reads as the node's allocatable, the
// allocated devices plus allocatableDevices() of the kind (an incomplete pool: the allocated ones).
ResourceCounts draCapacity(const DraPool& pool);
// Allocated devices per kind.
ResourceCounts draUsed(const DraPool& pool);

// What one pod of a workload claims, resolved against the cluster's DRA objects.
struct ClaimDemand {
  std::string resource;     // the kind, or "dra:<namespace>/<workload>"; "" with a problem
  std::int64_t perPod = 0;  // devices one pod's claims take
  bool ownKind = false;     // `resource` is the workload's own (selective claim)
  std::string problem;      // why the planner cannot count it ("" when it can)
  // The compiled requests (class selectors then request selectors, per request; the scheduler
  // evaluates a device's class first): with ownKind, what counts a device for it.
  std::vector<std::vector<DeviceSelector>> matchers;
  bool matches(const DraDevice& device) const;
};

// How many more pods of a workload whose pods claim `demand` the pool can take now: the devices
// it matches that allocatableDevices() counts, divided by the devices one pod takes. 0 for a demand
// with a problem.
std::int64_t draReplicaRoom(const DraPool& pool, const ClaimDemand& demand);

// The devices a reshape of `node`'s GPUs could publish: for each MIG profile of its model that the
// pool has no device of, one MIG device as the driver would describe it (attributes of a published
// device of the node, `profile` and memory set; productName from GPU Feature Discovery's label when
// nothing is published). Empty for partitionable pools and nodes without a known MIG model.
std::vector<DraDevice> draExemplars(const NodeState& node);

}  // namespace gpuscale::partition
