#include "gpuscale/reconciler/gpu_pod_mapping.h"

#include <map>

namespace gpuscale::reconciler {

int applyGpuMapping(partition::ClusterSnapshot& snapshot, GpuPodMapping& mapping,
                    std::chrono::system_clock::time_point now) {
  std::map<std::string, NodeGpuPods, std::less<>> podsByNode;
  for (const auto& pod : snapshot.pods) {
    if (pod.nodeName.empty() || !pod.active() || !pod.usesGpu()) continue;
    podsByNode[pod.nodeName][pod.ns + "/" + pod.name] =
        pod.startedAt.value_or(std::chrono::system_clock::time_point{});
  }
  int answered = 0;
  for (auto& node : snapshot.nodes) {
    if (!node.hasGpuPods || node.inTransition || !node.geometryKnown ||
        node.migStrategy != partition::MigStrategy::kMixed) {
      continue;
    }
    auto pods = podsByNode.find(node.name);
    if (pods == podsByNode.end()) continue;
    auto occupancy = mapping.occupancy(node.name, pods->second, now);
    if (!occupancy) continue;
    node.utilization = occupancy->utilization;
    if (!occupancy->settling.empty()) {
      node.gpuMappingSettling = true;
      continue;
    }
    ++answered;
    node.gpuMapped = true;
    for (auto& gpu : node.gpus) gpu.busy = !occupancy->idle(gpu.index);
  }
  return answered;
}

}  // namespace gpuscale::reconciler
