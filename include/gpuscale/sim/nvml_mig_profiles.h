// NvmlMigProfiles: what NVML reports for the GPU-instance profiles of a MIG-capable model
// (`nvidia-smi mig -lgip`): the profile ID and the instance's multiprocessors, engines and memory.
// The DRA driver emulation (dra_devices.h) names MIG devices by profile ID and publishes these
// numbers as device capacities; the placement rules stay in the partition catalog (mig_catalog.h).
//
// Only models whose listing was published are here: A100-40GB (the MIG user guide's
// A100-SXM4-40GB listing) and H100-80GB (a published H100 80GB HBM3 listing). Drivers differ by a
// few hundred MiB in the memory they report for the same profile.
//
// Thread safety: immutable static data.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpuscale::sim {

struct NvmlGpuInstanceProfile {
  std::string_view name;  // as the partition catalog names it, e.g. "1g.5gb", "1g.5gb+me"
  int id = 0;             // the GI profile ID (`-lgip` "ID"), e.g. 19 for 1g.5gb
  int multiprocessors = 0;
  int copyEngines = 0;
  int decoders = 0;
  int encoders = 0;
  int jpegEngines = 0;
  int ofaEngines = 0;
  std::int64_t memoryMiB = 0;
};

// The profiles of catalog model `modelName` (mig_catalog.h, e.g. "A100-40GB"), or nullptr when no
// listing is known for it.
const std::vector<NvmlGpuInstanceProfile>* nvmlGpuInstanceProfiles(std::string_view modelName);

// One profile of that model, or nullptr.
const NvmlGpuInstanceProfile* nvmlGpuInstanceProfile(std::string_view modelName,
                                                     std::string_view profile);

}  // namespace gpuscale::sim
