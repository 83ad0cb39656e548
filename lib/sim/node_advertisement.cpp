#include "gpuscale/sim/node_advertisement.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/resource_names.h"

namespace gpuscale::sim {
namespace {

using partition::DevicePluginConfig;
using partition::MigGpuSetting;
using partition::MigStrategy;
using partition::SharingConfig;

std::string_view sharingStrategy(const DevicePluginConfig* config) {
  if (config == nullptr) return "none";
  auto shared = [](const std::optional<SharingConfig>& s) {
    if (!s) return false;
    for (const auto& r : s->resources) {
      if (r.replicas > 1) return true;
    }
    return false;
  };
  if (shared(config->mps)) return "mps";
  if (shared(config->timeSlicing)) return "time-slicing";
  return "none";
}

std::string sharedSuffix(const DevicePluginConfig* config, std::string_view resource) {
  const SharingConfig* s = partition::activeSharing(config);
  return s != nullptr && !s->renameByDefault && s->replicasFor(resource) > 1 ? "-SHARED" : "";
}

// Why the plugin refuses to serve an MPS config, as the real one fails to start; "" when it serves.
std::string mpsRefusal(const std::vector<MigGpuSetting>& gpus, const DevicePluginConfig* config,
                       MigStrategy strategy) {
  if (sharingStrategy(config) != "mps") return "";
  if (strategy == MigStrategy::kMixed)
    return "using --mig-strategy=mixed is not supported with MPS";
  for (const auto& r : config->mps->resources) {
    if (r.replicas > 1 && r.name != partition::kGpuResource) {
      return fmt::format("MPS shares only {}, not {}", partition::kGpuResource, r.name);
    }
  }
  const bool mig =
      std::any_of(gpus.begin(), gpus.end(), [](const MigGpuSetting& g) { return g.migEnabled; });
  if (mig && strategy == MigStrategy::kSingle) {
    return "sharing using MPS is not supported for MIG devices";
  }
  return "";
}

// Physical MIG devices per profile over all MIG-enabled GPUs.
std::map<std::string, int> migDevices(const std::vector<MigGpuSetting>& gpus) {
  std::map<std::string, int> out;
  for (const auto& gpu : gpus) {
    if (!gpu.migEnabled) continue;
    for (const auto& [profile, count] : gpu.geometry) out[profile] += count;
  }
  return out;
}

void addGfdLabels(const GpuNodeSpec& node, const std::vector<MigGpuSetting>& gpus,
                  const DevicePluginConfig* config, MigStrategy strategy, Labels& labels) {
  const partition::GpuModel* model = partition::matchModel(node.product, node.memoryMiB);
  const std::string gpuResource(partition::kGpuResource);
  const auto devices = migDevices(gpus);
  labels["nvidia.com/gpu.present"] = "true";
  labels["nvidia.com/mig.capable"] = node.migCapable ? "true" : "false";
  labels["nvidia.com/mig.strategy"] = std::string(partition::migStrategyName(strategy));
  labels["nvidia.com/gpu.sharing-strategy"] = std::string(sharingStrategy(config));
  labels["nvidia.com/mps.capable"] = sharingStrategy(config) == "mps" ? "true" : "false";
  labels["nvidia.com/gpu.replicas"] =
      std::to_string(partition::sharedReplicas(config, gpuResource));
  labels["nvidia.com/gpu.product"] = node.product + sharedSuffix(config, gpuResource);
  labels["nvidia.com/gpu.count"] = std::to_string(gpus.size());
  labels["nvidia.com/gpu.memory"] = std::to_string(node.memoryMiB);
  if (strategy == MigStrategy::kSingle && devices.size() == 1 && model != nullptr) {
    const auto& [profile, count] = *devices.begin();
    const partition::MigProfile* p = model->profile(profile);
    labels["nvidia.com/gpu.product"] =
        fmt::format("{}-MIG-{}{}", node.product, profile, sharedSuffix(config, gpuResource));
    labels["nvidia.com/gpu.count"] = std::to_string(count);
    if (p != nullptr) {
      labels["nvidia.com/gpu.memory"] = std::to_string(p->memoryGb * 1024);
      labels["nvidia.com/gpu.slices.gi"] = std::to_string(p->slots);
      labels["nvidia.com/gpu.slices.ci"] = std::to_string(p->computeSlices);
    }
  }
  if (strategy != MigStrategy::kMixed || model == nullptr) return;
  for (const auto& [profile, count] : devices) {
    const partition::MigProfile* p = model->profile(profile);
    const std::string resource = partition::migResourceName(profile);
    const std::string prefix = resource + ".";
    const int replicas = partition::sharedReplicas(config, resource);
    labels[prefix + "count"] = std::to_string(count);
    labels[prefix + "replicas"] = std::to_string(replicas);
    labels[prefix + "product"] =
        fmt::format("{}-MIG-{}{}", node.product, profile, sharedSuffix(config, resource));
    labels[prefix + "sharing-strategy"] =
        replicas > 1 ? std::string(sharingStrategy(config)) : "none";
    if (p != nullptr) {
      labels[prefix + "memory"] = std::to_string(p->memoryGb * 1024);
      labels[prefix + "slices.gi"] = std::to_string(p->slots);
      labels[prefix + "slices.ci"] = std::to_string(p->computeSlices);
    }
  }
}

}  // namespace

MigStrategy effectiveStrategy(const GpuNodeSpec& node, const DevicePluginConfig* config) {
  if (config != nullptr && config->migStrategy) return *config->migStrategy;
  return node.migStrategy;
}

NodeAdvertisement advertise(const GpuNodeSpec& node, const std::vector<MigGpuSetting>& gpus,
                            const DevicePluginConfig* config, bool paused) {
  NodeAdvertisement out;
  const MigStrategy strategy = effectiveStrategy(node, config);
  addGfdLabels(node, gpus, config, strategy, out.labels);
  if (node.dra) return out;  // the DRA driver publishes the GPUs; no device plugin runs
  if (std::string why = mpsRefusal(gpus, config, strategy); !why.empty()) {
    out.error = why;
    return out;
  }
  auto exposed = partition::exposedResources(gpus, strategy, partition::activeSharing(config));
  if (!exposed) {
    out.error = exposed.status().message();
    return out;
  }
  out.capacity = *exposed;
  for (const auto& [resource, count] : out.capacity) out.allocatable[resource] = paused ? 0 : count;
  return out;
}

ResourceCounts unitsOfGpu(const GpuNodeSpec& node, const MigGpuSetting& gpu,
                          const DevicePluginConfig* config) {
  auto exposed = partition::exposedResources({gpu}, effectiveStrategy(node, config),
                                             partition::activeSharing(config));
  return exposed ? *exposed : ResourceCounts{};
}

bool isGfdLabel(std::string_view key) {
  if (key.starts_with("nvidia.com/gpu.")) return !key.starts_with("nvidia.com/gpu.deploy.");
  return key.starts_with("nvidia.com/mig-") || key == "nvidia.com/mig.capable" ||
         key == "nvidia.com/mig.strategy" || key == "nvidia.com/mps.capable";
}

}  // namespace gpuscale::sim
