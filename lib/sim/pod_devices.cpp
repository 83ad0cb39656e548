#include "gpuscale/sim/pod_devices.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/mps_sharing.h"
#include "gpuscale/partition/resource_names.h"

namespace gpuscale::sim {

const partition::MigProfile* deviceProfile(const GpuNodeSpec& node,
                                           const partition::MigGpuSetting& gpu,
                                           const std::string& resource) {
  const partition::GpuModel* model = partition::matchModel(node.product, node.memoryMiB);
  if (model == nullptr || !gpu.migEnabled) return nullptr;
  const std::string_view name = partition::unsharedResourceName(resource);
  if (name == partition::kGpuResource) {
    // Single strategy: nvidia.com/gpu is a MIG device of the GPU's one profile.
    return gpu.geometry.size() == 1 ? model->profile(gpu.geometry.begin()->first) : nullptr;
  }
  return partition::profileForResource(*model, name);
}

double deviceComputeFraction(const GpuNodeSpec& node, const partition::MigGpuSetting& gpu,
                             const std::string& resource) {
  const partition::GpuModel* model = partition::matchModel(node.product, node.memoryMiB);
  const partition::MigProfile* profile = deviceProfile(node, gpu, resource);
  if (profile == nullptr || model->computeSlices <= 0) return 1.0;
  return static_cast<double>(profile->computeSlices) / model->computeSlices;
}

std::map<std::string, std::int64_t> physicalDevices(const GpuNodeSpec& node,
                                                    const partition::MigGpuSetting& gpu,
                                                    const partition::DevicePluginConfig* config) {
  std::map<std::string, std::int64_t> out;
  for (const auto& [resource, units] : unitsOfGpu(node, gpu, config)) {
    const int replicas =
        partition::sharedReplicas(config, partition::unsharedResourceName(resource));
    out[resource] = std::max<std::int64_t>(1, units / std::max(1, replicas));
  }
  return out;
}

std::string deviceKey(std::string_view node, int gpu, std::string_view resource,
                      std::int64_t index) {
  return fmt::format("{}/gpu{}/{}/{}", node, gpu, resource, index);
}

std::vector<PodDevice> assignDevices(const GpuNodeSpec& node,
                                     const std::vector<partition::MigGpuSetting>& gpus,
                                     const partition::DevicePluginConfig* config,
                                     const std::vector<NodePod>& pods) {
  if (gpus.empty()) return {};
  std::vector<std::map<std::string, std::int64_t>> devicesPerGpu;
  for (const auto& gpu : gpus) devicesPerGpu.push_back(physicalDevices(node, gpu, config));

  // Pods per (GPU, resource), in creation order.
  struct Slot {
    size_t pod;
    int gpu;
    std::string resource;
  };
  std::vector<Slot> slots;
  for (size_t i = 0; i < pods.size(); ++i) {
    const NodePod& pod = pods[i];
    if (pod.requests.empty()) continue;
    int gpu = pod.gpus.size() == 1 ? *pod.gpus.begin() : 0;
    if (gpu < 0 || gpu >= static_cast<int>(gpus.size())) gpu = 0;
    slots.push_back({i, gpu, pod.requests.begin()->first});
  }
  std::stable_sort(slots.begin(), slots.end(), [&](const Slot& a, const Slot& b) {
    return std::tie(pods[a.pod].created, pods[a.pod].name) <
           std::tie(pods[b.pod].created, pods[b.pod].name);
  });

  std::map<std::pair<int, std::string>, int> seen;  // pods placed so far per (GPU, resource)
  std::map<std::string, int> sharers;               // device -> pods
  std::vector<std::optional<PodDevice>> out(pods.size());
  for (const Slot& slot : slots) {
    const NodePod& pod = pods[slot.pod];
    const auto it = devicesPerGpu[slot.gpu].find(slot.resource);
    const int64_t devices = it == devicesPerGpu[slot.gpu].end() ? 1 : it->second;
    const int64_t index = seen[{slot.gpu, slot.resource}]++ % devices;
    PodDevice d{pod.uid,
                pod.namespaceName,
                pod.name,
                pod.labels,
                deviceKey(node.name, slot.gpu, slot.resource, index),
                deviceComputeFraction(node, gpus[slot.gpu], slot.resource),
                1,
                slot.gpu,
                slot.resource,
                index,
                pod.container};
    const int replicas =
        partition::sharedReplicas(config, partition::unsharedResourceName(slot.resource));
    if (config != nullptr && config->mps && replicas > 1) {
      d.mpsThreadFraction = partition::mpsReplicaShare(0, replicas).activeThreadPercentage / 100.0;
    }
    ++sharers[d.device];
    out[slot.pod] = std::move(d);
  }
  std::vector<PodDevice> result;
  for (auto& d : out) {
    if (!d) continue;
    d->sharers = sharers[d->device];
    result.push_back(std::move(*d));
  }
  return result;
}

}  // namespace gpuscale::sim
