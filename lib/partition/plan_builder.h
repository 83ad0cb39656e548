// The working state of one planning pass (planner.h) and the steps that change it: growing a
// blocked workload through the policy's levers, sharing contended capacity, shrinking after a
// burst. Private to lib/partition: planner.cpp drives it; the MIG steps live in
// plan_builder_mig.cpp, the sharing steps (time-slicing, MPS) in plan_builder_sharing.cpp.
//
// Pure: reads the snapshot, writes nothing but its own state. Not thread-safe; one per pass.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/gpu_memory_need.h"
#include "gpuscale/partition/mig_geometry.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/planner.h"
#include "gpuscale/partition/snapshot.h"
#include "node_resource_table.h"
#include "why_log.h"

namespace gpuscale::partition::detail {

// One node as this plan would leave it.
struct WorkingNode {
  std::vector<MigGpuSetting> gpus;
  std::vector<bool> reshaped;
  std::map<std::string, int> replicas;  // changed sharing replicas per base resource
  std::set<std::string> raised;         // resources whose replicas this plan raised
  std::optional<SharingMode> mode;      // how this plan shares the node, when it changes that
  // Physical devices per resource once this plan reshapes the node; unset: the snapshot's.
  std::optional<ResourceCounts> devices;
};

struct Growth {
  int before = 0, aim = 0, after = 0;  // partition ceiling before, aimed at, after
};

class PlanBuilder {
 public:
  PlanBuilder(const ClusterSnapshot& snapshot, TimePoint now);
  // Grows `d` towards its aim. Returns the partition ceiling before and after, and the aim;
  // nullopt when the cooldown holds it.
  std::optional<Growth> grow(const WorkloadDemand& d);
  // plan_builder_contention.cpp. Workloads that can use the same nodes, in priority order:
  // blocked ones without a change in flight grow as they would alone (the levers change node-wide
  // capacity, which every one of them then sees as free); the others hold promises (demand.h
  // promisedPods) and do not grow. Then divideGroup (contention.h) reserves the promises and,
  // when the pods still needed exceed what is free after those changes (counting the partitions
  // operations in flight will create), shares the free pods: each grown HPA's maxReplicas is
  // raised only to what it holds plus its share (maxReplicas is what keeps one HPA from taking
  // another's share), and a promise that a higher priority needs is cut (Plan::promiseCuts for a
  // change in flight, a lowered maxReplicas for a raise not yet filled).
  void growGroup(const std::vector<const WorkloadDemand*>& group);
  // Whether growGroup lowered `d`'s promise in this plan (then it is not shrunk as well).
  bool promiseCut(const WorkloadDemand& d) const { return cut_.contains({d.ns, d.name}); }
  void shrink(const WorkloadDemand& d);
  // Nodes a blocked workload may land on: no burst reshape is given back there; nodes where a
  // capacity request holds granted partitions: nothing is given back there.
  void markBurstNodes(const std::vector<WorkloadDemand>& workloads);
  Plan finish(const std::vector<WorkloadDemand>& workloads);

 private:
  // planner.cpp: capacity as this plan leaves it, and bookkeeping.
  // A resource as the lookups below take it: its unshared (base) name and both ids in table_.
  // Made once per workload, not per node: the loops over every eligible node use these.
  struct ResourceKey {
    std::string base;
    NodeResourceTable::Key ids;
  };
  ResourceKey keyOf(std::string_view resource) const;
  int replicas(std::size_t i, const std::string& base) const;
  int replicas(std::size_t i, const ResourceKey& k) const;
  std::int64_t deviceCount(std::size_t i, const std::string& base) const;
  std::int64_t deviceCount(std::size_t i, const ResourceKey& k) const;
  std::int64_t usedOn(std::size_t i, const std::string& resource) const;
  std::int64_t usedOn(std::size_t i, const ResourceKey& k) const;
  int podsOn(const WorkloadDemand& d, std::size_t i) const;
  int podsOn(const WorkloadDemand& d, std::size_t i, const ResourceKey& k) const;
  // The active pods bound to node i, in snapshot order (an index built on first use).
  const std::vector<const PodState*>& activePodsOn(std::size_t i) const;
  // Whether node i's product labels match the pods' nodeSelector (exactly, as the scheduler
  // matches) once `base` runs `r` replicas and the node has its working geometry: GFD renames
  // the product with the sharing and, under the single strategy, with the MIG profile.
  bool pinsHold(const WorkloadDemand& d, std::size_t i, const std::string& base, int r) const;
  // The pods of `d` the working nodes hold (a replica is podsPerReplica(d) of them).
  int ceiling(const WorkloadDemand& d) const;
  static int podsPerReplica(const WorkloadDemand& d);
  bool changeable(const WorkloadDemand& d, std::size_t i) const;
  void because(const WorkloadDemand& d, std::size_t i, Lever lever, WhyCode code,
               std::string detail);
  void because(const WorkloadDemand& d, WhyReason r) { why_.add(d, std::move(r)); }
  // Why changeable(d, i) is false, for `lever`.
  WhyReason unchangeable(const WorkloadDemand& d, std::size_t i, Lever lever) const;
  void setMax(const WorkloadDemand& d, int to);

  // plan_builder_contention.cpp: pods of `resource` (`perPod` units each) free on `nodes` once
  // this plan applies, counting what operations in flight will create (NodeState::expected).
  int freePods(const std::set<std::size_t>& nodes, const std::string& resource,
               std::int64_t perPod) const;

  // plan_builder_mig.cpp: MIG geometry changes.
  bool reshapeable(const WorkloadDemand& d, std::size_t i) const;
  const std::vector<MigGeometry>& maximal(const GpuModel& model, const Policy& policy);
  void setGeometry(std::size_t i, std::size_t gpu, MigGeometry g);
  void setSetting(std::size_t i, std::size_t gpu, MigGpuSetting s);
  // Reshapes MIG-enabled idle GPUs of the eligible nodes first; then, when the policy allows MIG
  // mode changes and that was not enough, enables MIG on idle whole GPUs of nodes without GPU
  // pods (a mode change resets every GPU of the node).
  int reshapeFor(const WorkloadDemand& d, int need);
  // One mixed-strategy node: its idle MIG-enabled GPUs, or with `switchMode` its idle GPUs with
  // MIG disabled (each then gets the geometry that covers the need).
  int reshapeMixed(const WorkloadDemand& d, std::size_t i, int need, bool switchMode);
  // Why a node's idle MIG-disabled GPUs were not used in the first pass (reshapeFor).
  void whyModeUnchanged(const WorkloadDemand& d, std::size_t i, const std::vector<int>& idle);
  // Single strategy: every GPU must hold the same one-profile geometry, so the node changes as a
  // whole.
  int reshapeSingle(const WorkloadDemand& d, std::size_t i);
  // Gives back a burst's reshape (policy migGiveBack: restore): node i's GPUs return to the config
  // before gpuscale reshaped them, when the node holds no GPU pod, no blocked workload may land
  // there, MIG mode stays as it is (unless the policy allows mode changes), and the pods the
  // workload needs still fit without it.
  void restoreMig(const WorkloadDemand& d, int floorPods);
  // Node i's mig-parted change in this plan, if any.
  std::optional<MigReconfigure> migAction(std::size_t i) const;

  // plan_builder_sharing.cpp: the lever order, time-slicing and MPS.
  // Memory behind one unit of `base` on node i, when known.
  std::optional<double> partitionMemoryBytes(std::size_t i, const std::string& base) const;
  // Whether `d` waits for a node's per-GPU mapping to settle before choosing a lever
  // (lever_choice.h); notes why.
  bool waitsForMapping(const WorkloadDemand& d);
  // The policy's levers in order, towards `need` more pods; returns the pods gained. Devices that
  // are saturated (lever_choice.h) are time-sliced last, and only when no reshape gained anything
  // and the workload's pods fill the `before` partitions it has (else they are still landing on
  // the capacity the last change added).
  int applyLevers(const WorkloadDemand& d, int need, int before);
  // How node i shares once this plan applies.
  SharingMode nodeSharing(std::size_t i) const;
  // The fewest replicas per device of `base` on node i that the GPU memory of `d`'s pods and of
  // the pods already on those devices allows (gpu_memory_need.h), with the sentence saying whose.
  struct MemoryBound {
    int replicas = kNoMemoryBound;
    std::string why;
    GpuMemoryNeed::Kind kind = GpuMemoryNeed::Kind::kNone;
  };
  MemoryBound memoryBound(const WorkloadDemand& d, std::size_t i, const std::string& base) const;
  // Replicas per device `mode` allows on node i for `d` (0 when the node cannot share that way,
  // recorded as the reason why), and, when the pods' GPU memory is what bounds them, the sentence
  // saying so.
  struct SharingLimit {
    int replicas = 0;
    std::string memoryBound;
  };
  SharingLimit sharingLimit(const WorkloadDemand& d, std::size_t i, SharingMode mode);
  // Raises node-wide replicas of the workload's resource, time-slicing or MPS, on the eligible
  // nodes whose devices are saturated (`saturated`, lever_choice.h) or not.
  int shareFor(const WorkloadDemand& d, int need, SharingMode mode, bool saturated);
  // Why a node that could be time-sliced is not: the pods pin the unshared product spelling.
  std::string renameNote(const WorkloadDemand& d, std::size_t i) const;

  const ClusterSnapshot& snap_;
  TimePoint now_;
  NodeResourceTable table_;  // the snapshot's per-node counts (the plan's own are in nodes_)
  std::vector<WorkingNode> nodes_;
  mutable std::optional<std::unordered_map<std::string_view, std::vector<const PodState*>>>
      podsByNode_;  // activePodsOn: by spec.nodeName
  std::map<std::pair<std::string, std::string>, SetMaxReplicas> maxChanges_;
  std::map<std::pair<const GpuModel*, const Policy*>, std::vector<MigGeometry>> maximalCache_;
  std::vector<std::string> notes_;
  std::set<std::size_t> burstNodes_;
  // Nodes where a capacity request holds partitions it was granted and no pod of it uses yet:
  // no give-back lowers sharing there (markBurstNodes).
  std::set<std::size_t> grantedNodes_;
  std::map<std::pair<std::string, std::string>, std::string> shares_;  // contended HPAs: why
  std::vector<PromiseCut> promiseCuts_;
  std::set<std::pair<std::string, std::string>> cut_;  // HPAs whose promise growGroup lowered
  WhyLog why_;
};

}  // namespace gpuscale::partition::detail
