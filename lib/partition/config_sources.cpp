#include "config_sources.h"

#include <algorithm>
#include <string_view>
#include <tuple>

namespace gpuscale::partition {
namespace {

constexpr std::string_view kMigConfigKey = "config.yaml";
constexpr std::string_view kDefaultMigConfigMap = "default-mig-parted-config";

}  // namespace

ConfigSources::ConfigSources(std::vector<ConfigMapState> maps) : maps_(std::move(maps)) {
  std::sort(maps_.begin(), maps_.end(), [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });
}

std::vector<const MigPartedConfig*> ConfigSources::migConfigsFor(const std::string& node) {
  std::vector<std::pair<int, const MigPartedConfig*>> ranked;
  for (std::size_t i = 0; i < maps_.size(); ++i) {
    const MigPartedConfig* c = migConfig(i);
    if (c == nullptr) continue;
    int rank = maps_[i].name == node + "-mig-config"   ? 0
               : maps_[i].name == kDefaultMigConfigMap ? 2
                                                       : 1;
    ranked.emplace_back(rank, c);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const MigPartedConfig*> out;
  for (const auto& r : ranked) out.push_back(r.second);
  return out;
}

const DevicePluginConfig* ConfigSources::devicePluginConfig(const std::string& key) {
  auto cached = pluginConfigs_.find(key);
  if (cached != pluginConfigs_.end()) return cached->second ? &*cached->second : nullptr;
  std::optional<DevicePluginConfig> found;
  for (const auto& m : maps_) {
    auto it = m.data.find(key);
    if (it == m.data.end()) continue;
    auto parsed = parseDevicePluginConfig(it->second);
    if (parsed) {
      found = std::move(*parsed);
      break;
    }
  }
  auto& slot = pluginConfigs_[key] = std::move(found);
  return slot ? &*slot : nullptr;
}

const MigPartedConfig* ConfigSources::migConfig(std::size_t i) {
  auto cached = migConfigs_.find(i);
  if (cached == migConfigs_.end()) {
    std::optional<MigPartedConfig> parsed;
    auto it = maps_[i].data.find(std::string(kMigConfigKey));
    if (it != maps_[i].data.end()) {
      auto r = parseMigPartedConfig(it->second);
      if (r) parsed = std::move(*r);
    }
    cached = migConfigs_.emplace(i, std::move(parsed)).first;
  }
  return cached->second ? &*cached->second : nullptr;
}

}  // namespace gpuscale::partition
