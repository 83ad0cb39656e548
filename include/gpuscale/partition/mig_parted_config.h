// The mig-parted configuration file (`version: v1`, `mig-configs:`), as read by the GPU Operator's
// mig-manager from its ConfigMap (key `config.yaml`) and selected per node with the
// `nvidia.com/mig.config` label.
//
// Each named config is a list of entries; an entry selects GPUs by `device-filter` (PCI device ids,
// a string or a list) and `devices` (`all` or GPU indices) and gives them a MIG mode and geometry.
// GPUs that no entry selects are left untouched by mig-parted, which is what lets the reconciler
// emit per-GPU entries that change one GPU and restate the others.
//
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/mig_geometry.h"

namespace gpuscale::partition {

struct MigConfigEntry {
  std::vector<std::uint32_t> deviceFilter;  // empty: every GPU type
  bool allDevices = true;                   // `devices: all`
  std::vector<int> devices;                 // when !allDevices
  bool migEnabled = false;
  MigGeometry migDevices;  // empty when !migEnabled
  friend bool operator==(const MigConfigEntry&, const MigConfigEntry&) = default;
};

// Config name -> entries, in name order.
struct MigPartedConfig {
  std::map<std::string, std::vector<MigConfigEntry>> configs;
  friend bool operator==(const MigPartedConfig&, const MigPartedConfig&) = default;
};

// What one GPU is set to.
struct MigGpuSetting {
  bool migEnabled = false;
  MigGeometry geometry;
  friend bool operator==(const MigGpuSetting&, const MigGpuSetting&) = default;
};

// Parses the file. Errors (Status::invalid) name the offending line and column: wrong `version`,
// unknown fields, `mig-devices` on a MIG-disabled entry, non-positive counts, malformed device ids
// or indices.
core::Result<MigPartedConfig> parseMigPartedConfig(std::string_view yaml);

// The file text for `config`; parseMigPartedConfig(emitMigPartedConfig(c)) == c.
std::string emitMigPartedConfig(const MigPartedConfig& config);

// What config `name` sets GPU `index` of type `model` to, applying matching entries in order (later
// entries win, as mig-parted applies them in sequence). nullopt when `name` does not exist or no
// entry selects the GPU (mig-parted leaves it untouched). A `device-filter` entry never matches
// when `model` is nullptr.
std::optional<MigGpuSetting> resolveMigConfig(const MigPartedConfig& config, std::string_view name,
                                              const GpuModel* model, int index);

// One named config with one entry per distinct geometry, each listing its GPU indices (`devices:
// [..]`), so mig-parted rebuilds only GPUs whose geometry differs from their current state.
// `gpus[i]` is GPU i's setting.
std::vector<MigConfigEntry> perGpuEntries(const std::vector<MigGpuSetting>& gpus);

// Adds to `file` every named config of `sources` that `file` lacks (an earlier source wins a name
// two of them define); names `file` already has keep their entries. With ClusterPolicy
// migManager.config.name set, mig-manager reads that one ConfigMap and nothing else, so a node
// relabelled to a stock name (`all-balanced`, `all-1g.5gb`, ...) resolves only if the custom file
// carries it. Returns the number of configs added.
int carryOverConfigs(MigPartedConfig& file, const std::vector<MigPartedConfig>& sources);

}  // namespace gpuscale::partition
