#include "gpuscale/sim/pod_devices.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/resource_names.h"

namespace gpuscale::sim {
namespace {

int replicasOf(const partition::DevicePluginConfig* config, std::string_view resource) {
  if (config == nullptr) return 1;
  if (config->timeSlicing) return config->timeSlicing->replicasFor(resource);
  if (config->mps) return config->mps->replicasFor(resource);
  return 1;
}

}  // namespace

double deviceComputeFraction(const GpuNodeSpec& node, const partition::MigGpuSetting& gpu,
                             const std::string& resource) {
  const partition::GpuModel* model = partition::matchModel(node.product, node.memoryMiB);
  if (model == nullptr || !gpu.migEnabled || model->computeSlices <= 0) return 1.0;
  const std::string_view name = partition::unsharedResourceName(resource);
  const partition::MigProfile* profile = nullptr;
  if (name == partition::kGpuResource) {
    // Single strategy: nvidia.com/gpu is a MIG device of the GPU's one profile.
    if (gpu.geometry.size() == 1) profile = model->profile(gpu.geometry.begin()->first);
  } else {
    profile = partition::profileForResource(*model, name);
  }
  if (profile == nullptr) return 1.0;
  return static_cast<double>(profile->computeSlices) / model->computeSlices;
}

std::vector<PodDevice> assignDevices(const GpuNodeSpec& node,
                                     const std::vector<partition::MigGpuSetting>& gpus,
                                     const partition::DevicePluginConfig* config,
                                     const std::vector<NodePod>& pods) {
  if (gpus.empty()) return {};
  std::vector<ResourceCounts> units;
  for (const auto& gpu : gpus) units.push_back(unitsOfGpu(node, gpu, config));

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
    const auto it = units[slot.gpu].find(slot.resource);
    const int64_t offered = it == units[slot.gpu].end() ? 0 : it->second;
    const int replicas = replicasOf(config, partition::unsharedResourceName(slot.resource));
    const int64_t devices = std::max<int64_t>(1, offered / std::max(1, replicas));
    const int index = seen[{slot.gpu, slot.resource}]++;
    PodDevice d{pod.uid,
                pod.namespaceName,
                pod.name,
                pod.labels,
                fmt::format("{}/gpu{}/{}/{}", node.name, slot.gpu, slot.resource, index % devices),
                deviceComputeFraction(node, gpus[slot.gpu], slot.resource),
                1};
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
