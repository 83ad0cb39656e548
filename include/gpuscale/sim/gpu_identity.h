// GpuIdentity: the identifiers an emulated GPU shows to every consumer the same way — its UUID, the
// UUIDs of its MIG devices, its PCI bus, and the product name NVML reports — so that the
// dcgm-exporter series and the DRA driver's ResourceSlices name the same GPU alike.
//
// Values are derived from the node and GPU names (stable across restarts of the emulator), not a
// driver's numbering.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace gpuscale::sim {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" for GPU `gpu` of `node`.
std::string gpuUuid(std::string_view node, int gpu);

// "MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" for the MIG device of `profile` starting at memory
// slot `start` on GPU `gpu` of `node` (one instance per placement, so the placement names it).
std::string migUuid(std::string_view node, int gpu, std::string_view profile, int start);

// The PCI bus number of GPU `gpu` (0x07, 0x0F, ...: one bus per GPU, as on an 8-GPU board).
int pciBusNumber(int gpu);

// The NVML product name of a GFD `nvidia.com/gpu.product` value: its first '-' back to a space
// ("NVIDIA-A100-SXM4-40GB" -> "NVIDIA A100-SXM4-40GB"; GFD replaces spaces with dashes).
std::string nvmlProductName(std::string product);

}  // namespace gpuscale::sim
