// PodDevices: which physical device (a whole GPU or one MIG instance) each GPU pod of a node runs
// on, how much of a whole GPU's compute that device has, and which pods share it.
//
// GpuAllocation knows a pod's GPU; the device plugin also picks one device of the requested
// resource on it, and with time-slicing (or MPS) several pods get replicas of one device. The
// plugin's choice is not visible to Kubernetes; this model spreads the pods holding a resource on a
// GPU evenly over that resource's devices, in creation order (pod i of D devices is on device
// i mod D), so sharing counts are as even as the replicas allow. A pod whose GPU is unknown (it
// counts as holding every GPU) is put on the first GPU.
//
// Compute fraction: a whole GPU is 1; a MIG instance is its profile's compute slices over the
// model's (1g on an A100: 1/7), from the partition catalog. Nodes whose product is not in the MIG
// catalog (T4) only have whole GPUs.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/sim/node_advertisement.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

// A pod bound to the node, with what it requests and the GPUs the allocation gave it.
struct NodePod {
  std::string uid;
  std::string namespaceName;
  std::string name;
  std::string created;  // creationTimestamp (RFC 3339 sorts as text)
  core::Labels labels;
  ResourceCounts requests;  // nvidia.com/* per pod
  std::set<int> gpus;
  std::string container;  // the first container that requests nvidia.com/* resources
};

struct PodDevice {
  std::string uid;
  std::string namespaceName;
  std::string name;
  core::Labels labels;
  std::string device;            // deviceKey(node, gpu, resource, index): one physical device
  double computeFraction = 1.0;  // of a whole GPU
  int sharers = 1;               // pods on this device, this one included
  int gpu = 0;                   // GPU index on the node
  std::string resource;          // the resource the device is advertised as
  std::int64_t index = 0;        // the device among the GPU's devices of `resource`
  std::string container;         // the container that holds the device
  // MPS: the active-thread share of its GPU the MPS control daemon gives each client (100 /
  // replicas percent); 0 when the device is not MPS-shared.
  double mpsThreadFraction = 0;
};

// One emulated node's GPUs as of the emulator's last pass: what its dcgm-exporter sees.
struct NodeGpuView {
  GpuNodeSpec spec;
  std::vector<partition::MigGpuSetting> gpus;  // the current setting of each GPU
  std::optional<partition::DevicePluginConfig> devicePluginConfig;
  // A mig-manager run is pending: it pauses dcgm-exporter with the device plugin and GFD.
  bool operandsPaused = false;
  std::vector<PodDevice> pods;  // Running, not deleted pods holding nvidia.com/* devices
};

// The physical devices one GPU set to `gpu` offers under `config`: per advertised resource, the
// advertised units divided by the resource's time-slicing (or MPS) replicas, at least 1.
std::map<std::string, std::int64_t> physicalDevices(const GpuNodeSpec& node,
                                                    const partition::MigGpuSetting& gpu,
                                                    const partition::DevicePluginConfig* config);

// The key that names one physical device: "<node>/gpu<i>/<resource>/<index>".
std::string deviceKey(std::string_view node, int gpu, std::string_view resource,
                      std::int64_t index);

// The MIG profile of one device of `resource` (`.shared` ignored) on a GPU set to `gpu`; nullptr
// for a whole GPU (MIG off, or a model the catalog does not know).
const partition::MigProfile* deviceProfile(const GpuNodeSpec& node,
                                           const partition::MigGpuSetting& gpu,
                                           const std::string& resource);

// Compute fraction of one device of `resource` (`.shared` ignored) on a GPU set to `gpu`.
double deviceComputeFraction(const GpuNodeSpec& node, const partition::MigGpuSetting& gpu,
                             const std::string& resource);

// One PodDevice per pod that requests an nvidia.com/* resource, in the order of `pods`.
std::vector<PodDevice> assignDevices(const GpuNodeSpec& node,
                                     const std::vector<partition::MigGpuSetting>& gpus,
                                     const partition::DevicePluginConfig* config,
                                     const std::vector<NodePod>& pods);

}  // namespace gpuscale::sim
