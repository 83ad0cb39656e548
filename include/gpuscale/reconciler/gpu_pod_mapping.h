// Which GPUs of a node hold running pods. The Kubernetes API does not say which GPU a pod got, so
// the default answer is "unknown", and the reconciler then treats every GPU of a node with a
// running GPU pod as busy (the node-level rule). DcgmGpuPodMapping (dcgm_gpu_pod_mapping.h) reads
// dcgm-exporter series from Prometheus and answers per GPU when they account for every GPU pod the
// API places on the node.
//
// The rule callers apply (docs/reconciler.md, "Per-GPU mapping"): a GPU may be reshaped while
// other GPUs of its node hold pods only when the answer is known, the GPU was reported and holds
// no pod, the node uses the mixed MIG strategy and the GPU's MIG mode does not change. A
// mig-manager run pauses the node's device plugin (and dcgm-exporter) as a whole, which running
// pods survive; a MIG mode change needs a GPU reset, which they may not.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::reconciler {

// The GPU pods the API places on a node ("namespace/name") and when each started
// (status.startTime, else its creation; the epoch when unknown: then it never counts as new).
using NodeGpuPods = std::map<std::string, std::chrono::system_clock::time_point>;

// One node's GPUs as a mapping reports them. GPUs not in `reported` are unknown, hence busy.
struct GpuOccupancy {
  std::set<int> reported;  // GPU indices (nvidia-smi / mig-parted `devices` order) seen fresh
  std::set<int> busy;      // GPU indices that hold at least one pod
  // Pods that started moments ago and that no series names yet, while some GPU looks idle: the
  // answer is incomplete (such a pod may hold that GPU), so no GPU counts as idle and callers
  // wait for the mapping to settle rather than choose a lever on the worst case.
  std::set<std::string> settling{};
  // Mean utilisation (0..1) of the devices that hold a pod, per resource
  // ("nvidia.com/mig-1g.5gb", "nvidia.com/gpu"); empty when the metrics do not show it.
  std::map<std::string, double, std::less<>> utilization{};
  bool idle(int gpu) const {
    return settling.empty() && reported.contains(gpu) && !busy.contains(gpu);
  }
  bool operator==(const GpuOccupancy&) const = default;
};

class GpuPodMapping {
 public:
  virtual ~GpuPodMapping() = default;
  // The GPUs of `node` and the pods on them, given `pods`: the bound, unfinished pods with an
  // `nvidia.com/` request that the API places on the node. nullopt when the mapping is unknown,
  // stale, could not be read, or does not account for every pod of `pods` (beyond the settling
  // case above): callers then treat every GPU of the node as busy.
  virtual std::optional<GpuOccupancy> occupancy(const std::string& node, const NodeGpuPods& pods,
                                                std::chrono::system_clock::time_point now) = 0;
};

// The node-level rule: the mapping is never known.
class NodeLevelGpuPodMapping final : public GpuPodMapping {
 public:
  std::optional<GpuOccupancy> occupancy(const std::string&, const NodeGpuPods&,
                                        std::chrono::system_clock::time_point) override {
    return std::nullopt;
  }
};

// Clears `busy` on the GPUs `mapping` reports idle, on the nodes where the planner could use it:
// mixed MIG strategy, known geometry, GPU pods bound, not in transition. Other nodes keep the
// node-level rule. A settling answer sets NodeState::gpuMappingSettling (the GPUs stay busy) and
// any answer copies its utilisation to NodeState::utilization (partition/lever_choice.h). Returns
// how many nodes got a complete per-GPU answer.
int applyGpuMapping(partition::ClusterSnapshot& snapshot, GpuPodMapping& mapping,
                    std::chrono::system_clock::time_point now);

}  // namespace gpuscale::reconciler
