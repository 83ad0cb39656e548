// The NVIDIA k8s-device-plugin configuration file (`version: v1`, `flags:`, `sharing:`), one per
// key of the plugin's ConfigMap and selected per node with the `nvidia.com/device-plugin.config`
// label.
//
// The model covers what partitioning needs: the MIG strategy flag and the time-slicing / MPS
// sharing blocks (replicas per resource, `renameByDefault`, `failRequestsGreaterThanOne`). Other
// flags and top-level fields are kept verbatim so rewriting a config never drops an operator's
// settings. Replicas are per resource type and node-wide: the plugin has no per-GPU replica counts.
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::partition {

enum class MigStrategy { kNone, kSingle, kMixed };

// How the plugin shares a device: `sharing.timeSlicing` or `sharing.mps` (mutually exclusive).
enum class SharingMode { kTimeSlicing, kMps };
std::string_view sharingModeName(SharingMode mode);  // "timeSlicing" | "mps"
std::string_view migStrategyName(MigStrategy s);     // "none" | "single" | "mixed"
std::optional<MigStrategy> parseMigStrategy(std::string_view text);

struct ReplicatedResource {
  std::string name;  // "nvidia.com/gpu" or "nvidia.com/mig-<profile>"
  int replicas = 1;
  friend bool operator==(const ReplicatedResource&, const ReplicatedResource&) = default;
};

// `sharing.timeSlicing` or `sharing.mps`.
struct SharingConfig {
  bool renameByDefault = false;
  std::optional<bool> failRequestsGreaterThanOne;  // unset: the plugin's default
  std::vector<ReplicatedResource> resources;       // non-empty in a valid file
  // Replicas of `resource` (1 when it is not shared).
  int replicasFor(std::string_view resource) const;
  friend bool operator==(const SharingConfig&, const SharingConfig&) = default;
};

struct DevicePluginConfig {
  std::optional<MigStrategy> migStrategy;  // flags.migStrategy
  std::optional<SharingConfig> timeSlicing;
  std::optional<SharingConfig> mps;
  // Fields the model does not interpret, as YAML text per key, kept in file order.
  std::vector<std::pair<std::string, std::string>> otherFlags;
  std::vector<std::pair<std::string, std::string>> otherFields;
  friend bool operator==(const DevicePluginConfig&, const DevicePluginConfig&) = default;
};

// The sharing block in force: time-slicing or MPS (a valid file sets at most one); null without a
// config or without sharing. Both multiply resources the same way.
const SharingConfig* activeSharing(const DevicePluginConfig* config);
// Replicas of `resource` under that block: 1 without one, or for a resource it does not list.
int sharedReplicas(const DevicePluginConfig* config, std::string_view resource);

// Parses one config file. Errors (Status::invalid, with line and column) for a missing or wrong
// `version`, an unknown `migStrategy`, both timeSlicing and mps set, an empty `resources` list,
// replicas < 1, a resource listed twice, and wrongly typed fields; also for a config that could not
// be rewritten unchanged (keys or values the YAML emitter does not reproduce, such as control
// characters), so every accepted config survives emitDevicePluginConfig.
core::Result<DevicePluginConfig> parseDevicePluginConfig(std::string_view yaml);

// The file text; parseDevicePluginConfig(emitDevicePluginConfig(c)) == c.
std::string emitDevicePluginConfig(const DevicePluginConfig& config);

// `config` with the replicas of `resource` under `mode` set to `replicas` (other resources and
// flags kept). replicas <= 1 removes the resource (the plugin rejects replicas below 2); the
// sharing block disappears when no resource is left.
DevicePluginConfig withSharingReplicas(DevicePluginConfig config, SharingMode mode,
                                       std::string_view resource, int replicas);
// withSharingReplicas(config, SharingMode::kTimeSlicing, resource, replicas).
DevicePluginConfig withTimeSlicingReplicas(DevicePluginConfig config, std::string_view resource,
                                           int replicas);

// The sharing block of `mode` in `config`, or nullptr.
const SharingConfig* sharingOf(const DevicePluginConfig& config, SharingMode mode);

}  // namespace gpuscale::partition
