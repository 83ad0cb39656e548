// NodeAdvertisement: what the NVIDIA device plugin and GPU Feature Discovery publish for one node,
// given its GPUs' MIG settings and the device-plugin config the node selected.
//
// Resources (capacity and allocatable of `nvidia.com/gpu`, `nvidia.com/mig-<profile>`, with
// time-slicing or MPS replicas and the `.shared` renaming) come from partition::exposedResources;
// this file adds the pause during a MIG reconfiguration (allocatable 0, capacity kept, as kubelet
// reports devices of a stopped plugin) and GFD's labels:
//   nvidia.com/gpu.product   model, "-MIG-<profile>" (single strategy), "-SHARED" (shared, not
//   renamed) nvidia.com/gpu.count     physical GPUs (single strategy: MIG devices)
//   nvidia.com/gpu.memory    MiB of a GPU (single strategy: of a MIG device, memoryGb x 1024)
//   nvidia.com/gpu.replicas, nvidia.com/gpu.sharing-strategy (none | time-slicing | mps)
//   nvidia.com/mps.capable   "true" when the node shares with MPS (the GPU Operator runs the MPS
//                            control daemon there)
//   nvidia.com/mig.capable, nvidia.com/mig.strategy
//   mixed strategy, per profile p: nvidia.com/mig-<p>.{count,memory,replicas,product,
//     sharing-strategy,slices.gi,slices.ci}
// A config the device plugin cannot serve (single strategy over mixed geometries; MPS under the
// mixed strategy, on MIG devices or on a resource other than nvidia.com/gpu) advertises no GPU
// resources and says why in `error`, as the real plugin fails to start. A node whose GPUs the DRA
// driver publishes (`dra` in its spec) has GFD's labels and no GPU resources.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

using Labels = std::map<std::string, std::string>;
using ResourceCounts = std::map<std::string, std::int64_t>;

struct NodeAdvertisement {
  Labels labels;               // GFD labels only (see isGfdLabel)
  ResourceCounts capacity;     // nvidia.com/* only
  ResourceCounts allocatable;  // nvidia.com/* only
  std::string error;           // non-empty when the plugin cannot serve the config
};

// The MIG strategy in effect: the config's flags.migStrategy, else the node's (ClusterPolicy).
partition::MigStrategy effectiveStrategy(const GpuNodeSpec& node,
                                         const partition::DevicePluginConfig* config);

// `config` is the selected device-plugin config (nullptr: none, no sharing). `paused`: the device
// plugin is stopped for a MIG change.
NodeAdvertisement advertise(const GpuNodeSpec& node,
                            const std::vector<partition::MigGpuSetting>& gpus,
                            const partition::DevicePluginConfig* config, bool paused);

// Resource units one GPU offers (its devices x replicas), per resource name; the device plugin's
// view of GPU `index` alone, used to place pods on GPUs.
ResourceCounts unitsOfGpu(const GpuNodeSpec& node, const partition::MigGpuSetting& gpu,
                          const partition::DevicePluginConfig* config);

// True for labels GFD owns (so stale ones are removed): nvidia.com/gpu.* except gpu.deploy.*,
// nvidia.com/mig-*, nvidia.com/mig.capable, nvidia.com/mig.strategy, nvidia.com/mps.capable.
bool isGfdLabel(std::string_view key);

}  // namespace gpuscale::sim
