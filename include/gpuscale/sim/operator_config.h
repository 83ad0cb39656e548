// The GPU Operator's ConfigMaps as gpuscale-sim creates and reads them.
//
// mig-manager: `default-mig-parted-config` (key `config.yaml`) holds the configs the operator
// ships, generated here from the partition catalog the way mig-manager >= v0.15 generates them from
// NVML: `all-disabled`, `all-enabled`, `all-<profile>` ("+" spelled "."; the profile's maximum
// count, one device-filter entry per model that has it) and `all-balanced` (1g:2, 2g:1, 3g:1 on
// 7-slice models; 1g:2, 2g:1 on 4-slice ones).
//
// Which configs a node's mig-manager knows, as the GPU Operator wires it:
//   - ClusterPolicy migManager.config.name set: that custom ConfigMap and nothing else (the
//   operator
//     points CONFIG_FILE at it and skips generation). A stock name such as `all-balanced` that the
//     custom ConfigMap lacks fails (`nvidia.com/mig.config.state=failed`).
//   - unset: the config mig-manager generated for the node's GPUs, published as ConfigMap
//     `<node>-mig-config`; only when none was generated (no MIG profiles discovered) the default
//     ConfigMap.
//
// device plugin: one ConfigMap (ClusterPolicy devicePlugin.config.name), one key per named config.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

inline constexpr std::string_view kMigConfigKey = "config.yaml";

partition::MigPartedConfig defaultMigPartedConfig();

// What mig-manager generates for a node whose GPUs are all of type `model`: the default configs
// restricted to that model, without device filters (one device type). Empty for nullptr.
partition::MigPartedConfig generatedMigPartedConfig(const partition::GpuModel* model);

// A v1 ConfigMap with `data`.
kube::Object configMapObject(const std::string& ns, const std::string& name,
                             const std::map<std::string, std::string>& data);

// The ConfigMaps a node's mig-manager may read, in order: it reads the FIRST that exists, alone
// (never a name from one and a fallback from another). {custom} when the ClusterPolicy names one,
// else {`<node>-mig-config`, default}.
std::vector<std::string> migConfigMapsFor(const OperatorSpec& op, const std::string& node);

// Per-GPU settings of config `name` for `node` (GPUs no entry selects keep `current`), searching
// `configs` in order (parsed from migConfigMapsFor); nullopt when no config has that name.
std::optional<std::vector<partition::MigGpuSetting>> resolveNodeMigConfig(
    const std::vector<partition::MigPartedConfig>& configs, const GpuNodeSpec& node,
    const std::string& name, const std::vector<partition::MigGpuSetting>& current);

}  // namespace gpuscale::sim
