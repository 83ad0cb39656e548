#include "gpuscale/partition/device_plugin_config.h"

#include <algorithm>

#include <yaml-cpp/yaml.h>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/core/yaml_input.h"

namespace gpuscale::partition {
namespace {

constexpr core::EnumNames<MigStrategy, 3> kMigStrategyNames{{
    {MigStrategy::kNone, "none"},
    {MigStrategy::kSingle, "single"},
    {MigStrategy::kMixed, "mixed"},
}};

SharingConfig parseSharing(const YAML::Node& node, std::string_view what) {
  if (!node.IsMap()) core::yamlFail(node, std::string(what) + " must be a mapping");
  SharingConfig s;
  bool sawResources = false;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    if (key == "renameByDefault") {
      s.renameByDefault = core::yamlAs<bool>(kv.second, key);
    } else if (key == "failRequestsGreaterThanOne") {
      s.failRequestsGreaterThanOne = core::yamlAs<bool>(kv.second, key);
    } else if (key == "resources") {
      sawResources = true;
      if (!kv.second.IsSequence()) core::yamlFail(kv.second, "resources must be a list");
      for (const auto& r : kv.second) {
        if (!r.IsMap() || !r["name"] || !r["replicas"]) {
          core::yamlFail(r, "each resource needs a name and replicas");
        }
        ReplicatedResource res{core::yamlAs<std::string>(r["name"], "name"),
                               core::yamlAs<int>(r["replicas"], "replicas")};
        if (res.replicas < 1) core::yamlFail(r["replicas"], "replicas must be at least 1");
        if (std::any_of(s.resources.begin(), s.resources.end(),
                        [&](const ReplicatedResource& o) { return o.name == res.name; })) {
          core::yamlFail(r, "resource \"" + res.name + "\" is listed twice");
        }
        s.resources.push_back(std::move(res));
      }
    } else {
      core::yamlFail(kv.first, "unexpected field \"" + key + "\" in " + std::string(what));
    }
  }
  if (!sawResources || s.resources.empty())
    core::yamlFail(node, std::string(what) + ".resources is required");
  return s;
}

DevicePluginConfig parseDevicePluginRoot(std::string_view text) {
  YAML::Node root = YAML::Load(std::string(text));
  if (!root.IsMap()) core::yamlFail(root, "a device-plugin config must be a mapping");
  DevicePluginConfig c;
  bool sawVersion = false;
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (key == "version") {
      sawVersion = true;
      if (core::yamlAs<std::string>(kv.second, key) != "v1")
        core::yamlFail(kv.second, "version must be v1");
    } else if (key == "flags") {
      if (!kv.second.IsMap()) core::yamlFail(kv.second, "flags must be a mapping");
      for (const auto& flag : kv.second) {
        const auto name = flag.first.as<std::string>();
        if (name == "migStrategy") {
          c.migStrategy = parseMigStrategy(core::yamlAs<std::string>(flag.second, name));
          if (!c.migStrategy)
            core::yamlFail(flag.second, "migStrategy must be none, single or mixed");
        } else {
          c.otherFlags.emplace_back(name, YAML::Dump(flag.second));
        }
      }
    } else if (key == "sharing") {
      if (!kv.second.IsMap()) core::yamlFail(kv.second, "sharing must be a mapping");
      for (const auto& mode : kv.second) {
        const auto name = mode.first.as<std::string>();
        if (name == "timeSlicing") {
          c.timeSlicing = parseSharing(mode.second, "sharing.timeSlicing");
        } else if (name == "mps") {
          c.mps = parseSharing(mode.second, "sharing.mps");
        } else {
          core::yamlFail(mode.first, "unexpected field \"" + name + "\" in sharing");
        }
      }
      if (c.timeSlicing && c.mps)
        core::yamlFail(kv.second, "timeSlicing and mps are mutually exclusive");
    } else {
      c.otherFields.emplace_back(key, YAML::Dump(kv.second));
    }
  }
  if (!sawVersion) core::yamlFail(root, "missing required field \"version\"");
  return c;
}

void emitSharing(YAML::Emitter& out, std::string_view name, const SharingConfig& s) {
  out << YAML::Key << std::string(name) << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "renameByDefault" << YAML::Value << s.renameByDefault;
  if (s.failRequestsGreaterThanOne) {
    out << YAML::Key << "failRequestsGreaterThanOne" << YAML::Value
        << *s.failRequestsGreaterThanOne;
  }
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginSeq;
  for (const auto& r : s.resources) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << r.name << YAML::Key << "replicas"
        << YAML::Value << r.replicas << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
}

}  // namespace

std::string_view migStrategyName(MigStrategy s) {
  return core::enumName(kMigStrategyNames, s, "none");
}

std::optional<MigStrategy> parseMigStrategy(std::string_view text) {
  return core::enumValue(kMigStrategyNames, text);
}

int SharingConfig::replicasFor(std::string_view resource) const {
  for (const auto& r : resources) {
    if (r.name == resource) return r.replicas;
  }
  return 1;
}

const SharingConfig* activeSharing(const DevicePluginConfig* config) {
  if (config == nullptr) return nullptr;
  if (config->timeSlicing) return &*config->timeSlicing;
  if (config->mps) return &*config->mps;
  return nullptr;
}

int sharedReplicas(const DevicePluginConfig* config, std::string_view resource) {
  const SharingConfig* s = activeSharing(config);
  return s == nullptr ? 1 : s->replicasFor(resource);
}

core::Result<DevicePluginConfig> parseDevicePluginConfig(std::string_view yaml) {
  return core::guardYaml<DevicePluginConfig>("device-plugin config", [&] {
    DevicePluginConfig config = parseDevicePluginRoot(yaml);
    // Fields kept verbatim go through yaml-cpp's emitter, which cannot reproduce every key (control
    // characters, carriage returns); a config it would change is refused rather than rewritten.
    if (!(parseDevicePluginRoot(emitDevicePluginConfig(config)) == config)) {
      throw core::YamlInputError{core::Status::invalid(
          "a field gpuscale does not interpret cannot be rewritten unchanged")};
    }
    return config;
  });
}

std::string emitDevicePluginConfig(const DevicePluginConfig& c) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
  if (c.migStrategy || !c.otherFlags.empty()) {
    out << YAML::Key << "flags" << YAML::Value << YAML::BeginMap;
    if (c.migStrategy) {
      out << YAML::Key << "migStrategy" << YAML::Value
          << std::string(migStrategyName(*c.migStrategy));
    }
    for (const auto& [name, text] : c.otherFlags) {
      out << YAML::Key << name << YAML::Value << YAML::Load(text);
    }
    out << YAML::EndMap;
  }
  if (c.timeSlicing || c.mps) {
    out << YAML::Key << "sharing" << YAML::Value << YAML::BeginMap;
    if (c.timeSlicing) emitSharing(out, "timeSlicing", *c.timeSlicing);
    if (c.mps) emitSharing(out, "mps", *c.mps);
    out << YAML::EndMap;
  }
  for (const auto& [name, text] : c.otherFields) {
    out << YAML::Key << name << YAML::Value << YAML::Load(text);
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string_view sharingModeName(SharingMode mode) {
  return mode == SharingMode::kMps ? "mps" : "timeSlicing";
}

const SharingConfig* sharingOf(const DevicePluginConfig& config, SharingMode mode) {
  const auto& block = mode == SharingMode::kMps ? config.mps : config.timeSlicing;
  return block ? &*block : nullptr;
}

DevicePluginConfig withSharingReplicas(DevicePluginConfig config, SharingMode mode,
                                       std::string_view resource, int replicas) {
  std::optional<SharingConfig>& block = mode == SharingMode::kMps ? config.mps : config.timeSlicing;
  SharingConfig s = block.value_or(SharingConfig{});
  auto it = std::find_if(s.resources.begin(), s.resources.end(),
                         [&](const ReplicatedResource& r) { return r.name == resource; });
  if (replicas <= 1) {
    if (it != s.resources.end()) s.resources.erase(it);
  } else if (it != s.resources.end()) {
    it->replicas = replicas;
  } else {
    s.resources.push_back({std::string(resource), replicas});
  }
  if (s.resources.empty()) {
    block.reset();
  } else {
    block = std::move(s);
  }
  return config;
}

DevicePluginConfig withTimeSlicingReplicas(DevicePluginConfig config, std::string_view resource,
                                           int replicas) {
  return withSharingReplicas(std::move(config), SharingMode::kTimeSlicing, resource, replicas);
}

}  // namespace gpuscale::partition
