// The --gpu-mapping and --dcgm-* flags, shared by `run` and `explain`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"

namespace gpuscale::reconciler {

// Applies --gpu-mapping (node|dcgm) or one --dcgm-* flag. nullopt when `name` is none of them;
// false for a bad value.
std::optional<bool> applyGpuMappingFlag(std::string& mapping, DcgmMappingOptions& dcgm,
                                        std::string_view name, const std::string& value);

}  // namespace gpuscale::reconciler
