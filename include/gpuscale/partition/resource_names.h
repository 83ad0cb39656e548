// The extended-resource names the NVIDIA device plugin advertises for a node's GPUs, and how many
// of each, given the GPUs' MIG settings, the MIG strategy and time-slicing.
//
//   none:   nvidia.com/gpu = number of GPUs
//   single: nvidia.com/gpu = number of MIG devices (every GPU MIG-enabled with the same one-profile
//   geometry) mixed:  nvidia.com/mig-<profile> per profile ("+" becomes "."), nvidia.com/gpu for
//   non-MIG GPUs
// Time-slicing multiplies a resource by its replicas; with renameByDefault it is advertised as
// "<name>.shared" instead.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/mig_parted_config.h"

namespace gpuscale::partition {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kNvidiaPrefix = "nvidia.com/";
// The start of every MIG resource name and of the GPU Operator's per-profile labels.
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

// "nvidia.com/mig-1g.5gb.me" for "1g.5gb+me".
std::string migResourceName(std::string_view profile);

// The profile of `model` advertised as `resource` under the mixed strategy (".shared" suffix
// ignored), or nullptr when `resource` is not a MIG resource of that model.
const MigProfile* profileForResource(const GpuModel& model, std::string_view resource);

// `resource` without a trailing ".shared".
std::string_view unsharedResourceName(std::string_view resource);

// Resource name -> advertised count for a node with these GPUs. Errors (Status::invalid) for the
// single strategy when GPUs are mixed MIG and non-MIG or do not share one single-profile geometry.
core::Result<std::map<std::string, std::int64_t>> exposedResources(
    const std::vector<MigGpuSetting>& gpus, MigStrategy strategy, const SharingConfig* timeSlicing);

}  // namespace gpuscale::partition
