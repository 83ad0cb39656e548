// DraDevices: what NVIDIA's GPU DRA driver (its kubelet plugin, driver name `gpu.nvidia.com`)
// publishes for a node, as resource.k8s.io/v1 content: the DeviceClasses its Helm chart installs
// and the ResourceSlices of the node's pool (pool name = node name).
//
// Devices, as the driver names and describes them:
// - a whole GPU `gpu-<minor>` (the minor is the GPU index here): attributes `type: gpu`, `uuid`,
//   `productName`, `brand`, `architecture` (strings), `cudaComputeCapability`, `driverVersion`,
//   `cudaDriverVersion` (versions), and the standard `resource.kubernetes.io/pciBusID`,
//   `resource.kubernetes.io/pcieRoot`; capacity `memory` (bytes);
// - a MIG device `gpu-<minor>-mig-<profile without dots, RFC 1123>-<GI profile ID>-<placement
// start>`
//   (e.g. `gpu-0-mig-1g5gb-19-3`): attributes `type: mig`, `parentUUID`, `profile`, and the
//   parent's product, brand, architecture, versions and PCI attributes; capacities
//   `multiprocessors`, `copyEngines`, `decoders`, `encoders`, `jpegEngines`, `ofaEngines` and
//   `memory` (nvml_mig_profiles.h).
//
// Static MIG (default): one slice with every whole GPU whose MIG mode is off and every MIG device
// mig-manager created (each with its `uuid` and `memorySlice<i>: 1` for the memory slots it holds);
// a MIG-enabled GPU is not published whole.
// DynamicMIG (partitionable devices, KEP-4815): per MIG-capable GPU, the whole GPU (unless it is an
// Ampere part with MIG mode on, which cannot switch without a reset) and every possible placement
// of every profile, all consuming from one CounterSet `gpu-<minor>-counter-set` whose counters are
// the largest capacity of any profile (kebab-case: `copy-engines`, ...) plus `memory-slice-<i>: 1`
// per memory slot. A placement consumes its profile's capacities and its memory slots; the whole
// GPU consumes everything. From Kubernetes 1.35 on the counters live in a slice of their own
// (first), followed by one devices-only slice per GPU; on 1.34 each GPU's slice carries its counter
// set. A node without a MIG-capable GPU falls back to static publication, as the driver does.
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

inline constexpr std::string_view kDraDriver = "gpu.nvidia.com";

// The chart's DeviceClasses: `gpu.nvidia.com` (type gpu, extended resource `nvidia.com/gpu`) and
// `mig.nvidia.com` (type mig), each selecting on the driver and the `type` attribute.
std::vector<kube::Object> draDeviceClasses();

// The content of one ResourceSlice: `devices` and `sharedCounters` (JSON arrays, either may be
// empty).
struct DraSlice {
  kube::Object devices = kube::Object::array();
  kube::Object sharedCounters = kube::Object::array();
};

// Checks that the emulation can describe `spec`'s GPUs: a known architecture and compute capability
// (given or derived from the product), and NVML profile data for a MIG-capable model.
core::Status validateDra(const GpuNodeSpec& spec);

// The pool's slices in publish order. `gpus`: the node's MIG settings per GPU (mig-manager's;
// DynamicMIG ignores them but for the MIG mode of Ampere parts). `splitCounters`: the API server
// is 1.35 or later. Precondition: validateDra(spec) passed and spec.dra is set.
std::vector<DraSlice> draSlices(const GpuNodeSpec& spec,
                                const std::vector<partition::MigGpuSetting>& gpus,
                                bool splitCounters);

// What a device name of this driver denotes: the GPU, and for a MIG device its GI profile ID and
// placement start. nullopt for names the driver does not produce.
struct DraDeviceName {
  int gpu = 0;
  std::optional<int> giProfileId;
  int placementStart = 0;
};
std::optional<DraDeviceName> parseDraDeviceName(std::string_view name);

// A byte count as a binary-SI Kubernetes quantity ("4864Mi", "40Gi", "1").
std::string binaryQuantity(std::int64_t value);

}  // namespace gpuscale::sim
