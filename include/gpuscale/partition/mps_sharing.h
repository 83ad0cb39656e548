// MPS sharing through the NVIDIA device plugin (`sharing.mps` in its config): the facts the planner
// needs, as pure arithmetic and checks.
//
// What the device plugin and MPS do (the plugin's README, "Shared Access to GPUs / With CUDA MPS",
// its MPS control daemon, and the CUDA MPS documentation):
// - Replicas per GPU of `nvidia.com/gpu`, node-wide as with time-slicing: G GPUs at R replicas
//   advertise G x R `nvidia.com/gpu`, or G x R `nvidia.com/gpu.shared` with `renameByDefault`.
// - Unlike time-slicing, the MPS control daemon splits each GPU evenly and enforces it: every
//   client gets a pinned device-memory limit of total / R (whole MiB, rounded down) and an active
//   thread percentage of 100 / R (whole percent). A pod that outgrows its share fails its own
//   allocation instead of starving its neighbours.
// - Only `nvidia.com/gpu` and only full GPUs: "Sharing with MPS is currently not supported on
//   devices with MIG enabled". The plugin refuses to start with MPS and `migStrategy: mixed`
//   ("using --mig-strategy=mixed is not supported with MPS"), and under the single strategy a MIG
//   device among the shared ones is an error ("sharing using MPS is not supported for MIG
//   devices"); `single` over GPUs with MIG disabled, and `none`, work.
// - Replicas must be 2 or more (a config with 1 is rejected); no sharing is no `mps` block.
// - `failRequestsGreaterThanOne` defaults to true for MPS (older plugins ignore the field and
// always
//   fail): a container asking more than one shared unit fails admission. The planner uses MPS only
//   for pods that ask one unit.
// - Time-slicing and MPS are mutually exclusive in one config (the whole node shares one way).
// - GPU Feature Discovery labels an MPS node `nvidia.com/gpu.sharing-strategy=mps`,
//   `nvidia.com/gpu.replicas=R`, `nvidia.com/gpu.product=<model>-SHARED` (not renamed) and
//   `nvidia.com/mps.capable=true` (where the GPU Operator runs the MPS control daemon).
// - MPS serves at most 48 clients per GPU (Volta and later).
// - The plugin marks MPS experimental (since v0.15.0) and needs a CDI device-list strategy for it.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

inline constexpr int kMpsMaxClientsPerGpu = 48;
inline constexpr int kMinSharedReplicas = 2;  // the device plugin rejects fewer

// What the MPS control daemon gives each client of one GPU.
struct MpsReplicaShare {
  std::int64_t memoryLimitMiB = 0;  // pinned device memory
  int activeThreadPercentage = 100;
  friend bool operator==(const MpsReplicaShare&, const MpsReplicaShare&) = default;
};

// The share of each of `replicas` (>= 1) clients of a GPU with `gpuMemoryMiB` of memory.
MpsReplicaShare mpsReplicaShare(std::int64_t gpuMemoryMiB, int replicas);

// The most replicas a GPU takes: at most `policyMax` and 48, and, when `perPodBytes` is set, no
// more than leave every replica at least that much memory (unknown `gpuMemoryMiB` then allows
// none). Returns 1 (no sharing) when fewer than 2 replicas qualify.
int mpsReplicaLimit(int policyMax, std::optional<std::int64_t> gpuMemoryMiB,
                    std::optional<double> perPodBytes);

// Why the planner may not change `node`'s MPS replicas for pods that ask `perPod` units of
// `resource`, or "" when it may. `changeBusyNodes`: the policy lets nodes with GPU pods change.
std::string mpsBlocker(const NodeState& node, std::string_view resource, std::int64_t perPod,
                       bool changeBusyNodes);

// The whole-GPU memory of `node` in MiB (nvidia.com/gpu.memory), when known.
std::optional<std::int64_t> gpuMemoryMiB(const NodeState& node);

}  // namespace gpuscale::partition
