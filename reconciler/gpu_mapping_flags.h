// The --gpu-mapping and --dcgm-* flags, shared by `run` and `explain`.
#pragma once

#include <string>

#include "gpuscale/core/flag_set.h"
#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"

namespace gpuscale::reconciler {

// Declares --gpu-mapping (node|dcgm, into `*mapping`) and the --dcgm-* flags (into `*dcgm`).
void addGpuMappingFlags(core::FlagSet& flags, std::string* mapping, DcgmMappingOptions* dcgm);

}  // namespace gpuscale::reconciler
