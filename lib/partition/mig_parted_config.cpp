#include "gpuscale/partition/mig_parted_config.h"

#include <algorithm>

#include <yaml-cpp/yaml.h>

#include "gpuscale/core/yaml_input.h"

namespace gpuscale::partition {
namespace {

std::uint32_t parseFilterId(const YAML::Node& node) {
  auto id = parsePciId(core::yamlAs<std::string>(node, "device-filter"));
  if (!id) core::yamlFail(node, "device-filter entries must be PCI ids such as 0x20B010DE");
  return *id;
}

MigConfigEntry parseEntry(const YAML::Node& node) {
  if (!node.IsMap()) core::yamlFail(node, "a mig-config entry must be a mapping");
  MigConfigEntry entry;
  bool sawDevices = false;
  bool sawEnabled = false;
  YAML::Node migDevices;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const YAML::Node& value = kv.second;
    if (key == "device-filter") {
      if (value.IsSequence()) {
        for (const auto& id : value) entry.deviceFilter.push_back(parseFilterId(id));
      } else {
        entry.deviceFilter.push_back(parseFilterId(value));
      }
    } else if (key == "devices") {
      sawDevices = true;
      if (value.IsScalar() && value.Scalar() == "all") {
        entry.allDevices = true;
      } else if (value.IsSequence()) {
        entry.allDevices = false;
        for (const auto& index : value) {
          int i = core::yamlAs<int>(index, "devices");
          if (i < 0) core::yamlFail(index, "GPU indices must not be negative");
          entry.devices.push_back(i);
        }
      } else {
        core::yamlFail(value, "devices must be \"all\" or a list of GPU indices");
      }
    } else if (key == "mig-enabled") {
      sawEnabled = true;
      entry.migEnabled = core::yamlAs<bool>(value, "mig-enabled");
    } else if (key == "mig-devices") {
      migDevices = value;
    } else {
      core::yamlFail(kv.first, "unexpected field \"" + key + "\"");
    }
  }
  if (!sawDevices) core::yamlFail(node, "missing required field \"devices\"");
  if (!sawEnabled) core::yamlFail(node, "missing required field \"mig-enabled\"");
  if (migDevices && !migDevices.IsNull()) {
    if (!migDevices.IsMap())
      core::yamlFail(migDevices, "mig-devices must be a mapping of profile to count");
    if (!entry.migEnabled && migDevices.size() > 0) {
      core::yamlFail(migDevices, "mig-devices must be empty when mig-enabled is false");
    }
    for (const auto& kv : migDevices) {
      int count = core::yamlAs<int>(kv.second, "mig-devices");
      if (count < 0) core::yamlFail(kv.second, "mig-devices counts must not be negative");
      if (count > 0) entry.migDevices[kv.first.as<std::string>()] += count;
    }
  } else if (entry.migEnabled && !migDevices) {
    core::yamlFail(node, "missing required field \"mig-devices\" (use {} for none)");
  }
  return entry;
}

MigPartedConfig parseMigPartedRoot(std::string_view text) {
  YAML::Node root = YAML::Load(std::string(text));
  if (!root.IsMap()) core::yamlFail(root, "a mig-parted config must be a mapping");
  MigPartedConfig config;
  bool sawVersion = false;
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (key == "version") {
      sawVersion = true;
      if (core::yamlAs<std::string>(kv.second, "version") != "v1")
        core::yamlFail(kv.second, "version must be v1");
    } else if (key == "mig-configs") {
      if (!kv.second.IsMap()) core::yamlFail(kv.second, "mig-configs must be a mapping");
      for (const auto& named : kv.second) {
        const auto name = named.first.as<std::string>();
        if (!named.second.IsSequence() || named.second.size() == 0) {
          core::yamlFail(named.second, "mig-config \"" + name + "\" must be a non-empty list");
        }
        auto& entries = config.configs[name];
        for (const auto& entry : named.second) entries.push_back(parseEntry(entry));
      }
    } else {
      core::yamlFail(kv.first, "unexpected field \"" + key + "\"");
    }
  }
  if (!sawVersion) core::yamlFail(root, "missing required field \"version\"");
  return config;
}

bool selects(const MigConfigEntry& entry, const GpuModel* model, int index) {
  if (!entry.deviceFilter.empty()) {
    if (model == nullptr) return false;
    bool match =
        std::any_of(entry.deviceFilter.begin(), entry.deviceFilter.end(), [&](std::uint32_t id) {
          return std::find(model->pciIds.begin(), model->pciIds.end(), id) != model->pciIds.end();
        });
    if (!match) return false;
  }
  return entry.allDevices ||
         std::find(entry.devices.begin(), entry.devices.end(), index) != entry.devices.end();
}

}  // namespace

core::Result<MigPartedConfig> parseMigPartedConfig(std::string_view yaml) {
  return core::guardYaml<MigPartedConfig>("mig-parted config",
                                          [&] { return parseMigPartedRoot(yaml); });
}

std::string emitMigPartedConfig(const MigPartedConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
  out << YAML::Key << "mig-configs" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, entries] : config.configs) {
    out << YAML::Key << name << YAML::Value << YAML::BeginSeq;
    for (const auto& e : entries) {
      out << YAML::BeginMap;
      if (!e.deviceFilter.empty()) {
        out << YAML::Key << "device-filter" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (auto id : e.deviceFilter) out << formatPciId(id);
        out << YAML::EndSeq;
      }
      out << YAML::Key << "devices" << YAML::Value;
      if (e.allDevices) {
        out << "all";
      } else {
        out << YAML::Flow << e.devices;
      }
      out << YAML::Key << "mig-enabled" << YAML::Value << e.migEnabled;
      if (e.migEnabled) {
        out << YAML::Key << "mig-devices" << YAML::Value;
        if (e.migDevices.empty()) out << YAML::Flow;
        out << YAML::BeginMap;
        for (const auto& [profile, count] : e.migDevices) {
          out << YAML::Key << YAML::DoubleQuoted << profile << YAML::Value << count;
        }
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::optional<MigGpuSetting> resolveMigConfig(const MigPartedConfig& config, std::string_view name,
                                              const GpuModel* model, int index) {
  auto it = config.configs.find(std::string(name));
  if (it == config.configs.end()) return std::nullopt;
  std::optional<MigGpuSetting> setting;
  for (const auto& entry : it->second) {
    if (selects(entry, model, index)) setting = MigGpuSetting{entry.migEnabled, entry.migDevices};
  }
  return setting;
}

std::vector<MigConfigEntry> perGpuEntries(const std::vector<MigGpuSetting>& gpus) {
  std::vector<MigConfigEntry> entries;
  for (int i = 0; i < static_cast<int>(gpus.size()); ++i) {
    auto same = std::find_if(entries.begin(), entries.end(), [&](const MigConfigEntry& e) {
      return e.migEnabled == gpus[i].migEnabled && e.migDevices == gpus[i].geometry;
    });
    if (same != entries.end()) {
      same->devices.push_back(i);
      continue;
    }
    MigConfigEntry e;
    e.allDevices = false;
    e.devices = {i};
    e.migEnabled = gpus[i].migEnabled;
    e.migDevices = gpus[i].migEnabled ? gpus[i].geometry : MigGeometry{};
    entries.push_back(std::move(e));
  }
  return entries;
}

int carryOverConfigs(MigPartedConfig& file, const std::vector<MigPartedConfig>& sources) {
  int added = 0;
  for (const auto& source : sources) {
    for (const auto& [name, entries] : source.configs) {
      if (file.configs.emplace(name, entries).second) ++added;
    }
  }
  return added;
}

}  // namespace gpuscale::partition
