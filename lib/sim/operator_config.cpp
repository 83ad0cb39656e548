#include "gpuscale/sim/operator_config.h"

#include <algorithm>

#include "gpuscale/partition/mig_catalog.h"

namespace gpuscale::sim {
namespace {

using partition::GpuModel;
using partition::MigConfigEntry;
using partition::MigProfile;

std::string configNameOf(const std::string& profile) {
  std::string name = "all-" + profile;
  std::replace(name.begin(), name.end(), '+', '.');
  return name;
}

// The base profile with `g` compute slices and the fewest memory slots.
const MigProfile* smallestBase(const GpuModel& model, int g) {
  const MigProfile* best = nullptr;
  for (const auto& p : model.profiles) {
    if (p.base && p.computeSlices == g && (best == nullptr || p.slots < best->slots)) best = &p;
  }
  return best;
}

MigConfigEntry entryFor(const GpuModel& model, partition::MigGeometry geometry) {
  MigConfigEntry e;
  e.deviceFilter = model.pciIds;
  e.migEnabled = true;
  e.migDevices = std::move(geometry);
  return e;
}

}  // namespace

partition::MigPartedConfig defaultMigPartedConfig() {
  partition::MigPartedConfig config;
  MigConfigEntry disabled;
  disabled.migEnabled = false;
  MigConfigEntry enabled;
  enabled.migEnabled = true;
  config.configs["all-disabled"] = {disabled};
  config.configs["all-enabled"] = {enabled};
  for (const GpuModel& model : partition::migCatalog()) {
    if (model.pciIds.empty()) continue;
    for (const MigProfile& p : model.profiles) {
      config.configs[configNameOf(p.name)].push_back(entryFor(model, {{p.name, p.maxCount}}));
    }
    partition::MigGeometry balanced;
    for (int g : model.computeSlices >= 7 ? std::vector{1, 2, 3} : std::vector{1, 2}) {
      const MigProfile* p = smallestBase(model, g);
      if (p != nullptr) balanced[p->name] = g == 1 ? 2 : 1;
    }
    if (partition::isValidGeometry(model, balanced)) {
      config.configs["all-balanced"].push_back(entryFor(model, std::move(balanced)));
    }
  }
  return config;
}

partition::MigPartedConfig generatedMigPartedConfig(const GpuModel* model) {
  partition::MigPartedConfig out;
  if (model == nullptr) return out;
  auto matches = [&](const MigConfigEntry& e) {
    if (e.deviceFilter.empty()) return true;
    return std::any_of(e.deviceFilter.begin(), e.deviceFilter.end(), [&](std::uint32_t id) {
      return std::find(model->pciIds.begin(), model->pciIds.end(), id) != model->pciIds.end();
    });
  };
  for (const auto& [name, entries] : defaultMigPartedConfig().configs) {
    for (MigConfigEntry e : entries) {
      if (!matches(e)) continue;
      e.deviceFilter.clear();
      out.configs[name].push_back(std::move(e));
    }
  }
  return out;
}

kube::Object configMapObject(const std::string& ns, const std::string& name,
                             const std::map<std::string, std::string>& data) {
  kube::Object cm = {{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"metadata",
                      {{"name", name},
                       {"namespace", ns},
                       {"labels", {{"app.kubernetes.io/managed-by", "gpuscale-sim"}}}}},
                     {"data", kube::Object::object()}};
  for (const auto& [key, value] : data) cm["data"][key] = value;
  return cm;
}

std::vector<std::string> migConfigMapsFor(const OperatorSpec& op, const std::string& node) {
  if (!op.customMigConfigMap.empty()) return {op.customMigConfigMap};
  return {node + "-mig-config", op.defaultMigConfigMap};
}

std::optional<std::vector<partition::MigGpuSetting>> resolveNodeMigConfig(
    const std::vector<partition::MigPartedConfig>& configs, const GpuNodeSpec& node,
    const std::string& name, const std::vector<partition::MigGpuSetting>& current) {
  const GpuModel* model = partition::matchModel(node.product, node.memoryMiB);
  for (const auto& config : configs) {
    if (!config.configs.contains(name)) continue;
    std::vector<partition::MigGpuSetting> out = current;
    for (int i = 0; i < static_cast<int>(out.size()); ++i) {
      if (auto s = partition::resolveMigConfig(config, name, model, i)) out[i] = std::move(*s);
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace gpuscale::sim
