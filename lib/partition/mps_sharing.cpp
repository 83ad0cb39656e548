#include "gpuscale/partition/mps_sharing.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpuscale/partition/gpu_product.h"
#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition {
namespace {

constexpr double kBytesPerMiB = 1048576.0;

bool migEnabledAnywhere(const NodeState& node) {
  if (!parseGpuProduct(node.product).migProfile.empty()) return true;
  return std::any_of(node.gpus.begin(), node.gpus.end(),
                     [](const GpuState& g) { return g.setting.migEnabled; });
}

bool timeSliced(const NodeState& node) {
  return node.sharingMode == SharingMode::kTimeSlicing && !node.sharedReplicas.empty();
}

}  // namespace

MpsReplicaShare mpsReplicaShare(std::int64_t gpuMemoryMiB, int replicas) {
  replicas = std::max(1, replicas);
  return {gpuMemoryMiB / replicas, 100 / replicas};
}

int mpsReplicaLimit(int policyMax, std::optional<std::int64_t> gpuMemoryMiB,
                    std::optional<double> perPodBytes) {
  int limit = std::min(policyMax, kMpsMaxClientsPerGpu);
  if (perPodBytes) {
    if (!gpuMemoryMiB || *perPodBytes <= 0) return 1;
    // The daemon's limit is whole MiB, rounded down: a pod needs that many whole MiB.
    const auto needMiB = static_cast<std::int64_t>(std::ceil(*perPodBytes / kBytesPerMiB));
    while (limit >= kMinSharedReplicas &&
           mpsReplicaShare(*gpuMemoryMiB, limit).memoryLimitMiB < needMiB) {
      --limit;
    }
  }
  return limit >= kMinSharedReplicas ? limit : 1;
}

std::string mpsBlocker(const NodeState& node, std::string_view resource, std::int64_t perPod,
                       bool changeBusyNodes) {
  if (unsharedResourceName(resource) != kGpuResource) {
    return fmt::format("MPS shares only {} (whole GPUs), not {}", kGpuResource, resource);
  }
  if (node.migStrategy == MigStrategy::kMixed) {
    return "the device plugin does not run MPS under the mixed MIG strategy";
  }
  if (migEnabledAnywhere(node)) return "MPS is not supported on GPUs with MIG enabled";
  if (timeSliced(node)) return "the node is time-sliced (time-slicing and MPS exclude each other)";
  if (perPod > 1) {
    return fmt::format(
        "pods ask {} units and the device plugin fails requests above 1 under MPS "
        "(failRequestsGreaterThanOne)",
        perPod);
  }
  if (node.hasGpuPods && !changeBusyNodes) {
    return "GPU pods run there and a change restarts the MPS control daemon (mps.changeBusyNodes "
           "is false)";
  }
  return "";
}

std::optional<std::int64_t> gpuMemoryMiB(const NodeState& node) {
  if (!node.gpuMemoryGiB) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(*node.gpuMemoryGiB * 1024.0));
}

}  // namespace gpuscale::partition
