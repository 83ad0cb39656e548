// The GPU Operator's ConfigMaps as the snapshot reads them (private to lib/partition).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"

namespace gpuscale::partition {

struct ConfigMapState {
  std::string ns, name;
  std::map<std::string, std::string> data;
};

// The GPU Operator's ConfigMaps of a snapshot (mig-parted files under `config.yaml`, device-plugin
// configs one per key), each parsed lazily, once. Not thread-safe (one snapshot build).
class ConfigSources {
 public:
  explicit ConfigSources(std::vector<ConfigMapState> maps);

  // The mig-parted configs that may define a node's config, most specific first: the node's
  // generated `<node>-mig-config`, then other ConfigMaps, `default-mig-parted-config` last.
  std::vector<const MigPartedConfig*> migConfigsFor(const std::string& node);
  // The device-plugin config under `key` in the first ConfigMap (by namespace/name) that has a
  // parseable one, or nullptr.
  const DevicePluginConfig* devicePluginConfig(const std::string& key);

 private:
  const MigPartedConfig* migConfig(std::size_t i);

  std::vector<ConfigMapState> maps_;
  std::map<std::size_t, std::optional<MigPartedConfig>> migConfigs_;
  std::map<std::string, std::optional<DevicePluginConfig>> pluginConfigs_;
};

}  // namespace gpuscale::partition
