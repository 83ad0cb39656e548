// DcgmExposition: the series NVIDIA dcgm-exporter would serve for the GPUs gpuscale-sim emulates
// (reference inference-metrics.md §4), with its Kubernetes mapping on (DCGM_EXPORTER_KUBERNETES,
// as the GPU Operator runs it), so that a real Prometheus scraping `gpuscale-sim run` holds what
// gpuscale-reconciler's `--gpu-mapping=dcgm` reads in a real cluster.
//
// One series per family for every GPU with MIG off, and for every MIG instance of a MIG-enabled
// GPU (a MIG-enabled GPU without instances has none). Labels, in dcgm-exporter's order:
//   gpu (index), UUID, pci_bus_id, device ("nvidia<i>"), modelName (the GFD product with its first
//   '-' back to a space: "NVIDIA A100-SXM4-40GB"), [GPU_I_PROFILE, GPU_I_ID for MIG instances],
//   Hostname (the node name), and container, namespace, pod when a pod holds the device.
// UUID, pci_bus_id and GPU_I_ID are stable per node and GPU (derived from the names, not a
// driver's numbering). A time-sliced device is reported for one of its pods only (the first by
// namespace/name), as dcgm-exporter does without KUBERNETES_VIRTUAL_GPUS. Nodes whose operands a
// mig-manager run has paused export nothing (the exporter pod is gone until the run ends).
//
// Families (busy = the load model's busy fraction of the device, 0 without load):
//   DCGM_FI_DEV_GPU_UTIL          gauge, % (0-100) = round(100 busy); whole GPUs only (dcgm does
//                                 not report it for MIG instances)
//   DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge, ratio 0-1 = busy
//   DCGM_FI_DEV_FB_USED           gauge, MiB: half the device's memory while a pod holds it (the
//                                 served model and its runtime), else 0
//   DCGM_FI_DEV_FB_FREE           gauge, MiB: the device's memory minus FB_USED (a MIG instance
//                                 has its profile's memory, e.g. 5 GiB for 1g.5gb)
//
// Thread safety: pure functions over values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuscale/sim/pod_devices.h"

namespace gpuscale::sim {

// The families above for `nodes`. `busy`: busy fraction per device key (PodDevice::device).
std::string renderDcgmSeries(const std::vector<NodeGpuView>& nodes,
                             const std::map<std::string, double>& busy);

}  // namespace gpuscale::sim
