#include "gpuscale/reconciler/config_maps_init.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::reconciler {
namespace {

using nlohmann::json;

kube::ResourceRef configMapsOf(const std::string& ns) {
  return kube::ResourceRef::collection("", "v1", "configmaps", ns);
}

// What the ClusterPolicies name today: spec.<component>.config.name of the first one that sets
// it (a cluster has one ClusterPolicy; "" when none does or they cannot be read).
std::string policyConfigName(kube::KubeClient& client, const char* component) {
  auto policies =
      client.list(kube::ResourceRef::collection("nvidia.com", "v1", "clusterpolicies"), {});
  if (!policies) return {};
  for (const auto& policy : policies->items) {
    std::string name = k8s::stringAt(policy, {"spec", component, "config", "name"});
    if (!name.empty()) return name;
  }
  return {};
}

// Creates ConfigMap `name` of `ns` with `data`; a 409 means another writer created it first.
ConfigMapInit create(kube::KubeClient& client, const std::string& ns, const std::string& name,
                     json data, const std::string& from) {
  const std::string full = ns + "/" + name;
  json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", name}, {"namespace", ns}}},
             {"data", std::move(data)}};
  auto r = client.create(configMapsOf(ns), cm);
  if (r) return {full, ConfigMapInitOutcome::kCreated, from};
  if (k8s::isConflict(r.status())) {
    return {full, ConfigMapInitOutcome::kExists,
            "created meanwhile by another writer; left as it is"};
  }
  return {full, ConfigMapInitOutcome::kFailed, "cannot create it: " + r.status().message()};
}

// The ConfigMap's state when it is already there (or cannot be read); nullopt when absent.
std::optional<ConfigMapInit> existing(kube::KubeClient& client, const std::string& ns,
                                      const std::string& name) {
  const std::string full = ns + "/" + name;
  auto cm = client.get(configMapsOf(ns).named(name));
  if (cm) return ConfigMapInit{full, ConfigMapInitOutcome::kExists, "left as it is"};
  if (k8s::isNotFound(cm.status())) return std::nullopt;
  return ConfigMapInit{full, ConfigMapInitOutcome::kFailed,
                       "cannot read it: " + cm.status().message()};
}

ConfigMapInit initMig(kube::KubeClient& client, const ConfigMapsInitOptions& o) {
  const std::string& ns = o.operatorNamespace;
  if (auto found = existing(client, ns, o.migConfigMap)) return *found;
  std::vector<std::string> names;
  const std::string current = policyConfigName(client, "migManager");
  if (!current.empty() && current != o.migConfigMap) names.push_back(current);
  if (current != o.defaultMigConfigMap) names.push_back(o.defaultMigConfigMap);
  std::vector<std::string> skipped;
  auto sources = readMigPartedConfigMaps(client, ns, names, &skipped);
  const std::string full = ns + "/" + o.migConfigMap;
  if (sources.empty()) {
    return {full, ConfigMapInitOutcome::kFailed,
            fmt::format("no mig-parted config to start from ({}); give the ConfigMap mig-manager "
                        "reads with --default-mig-config-map",
                        fmt::join(skipped, "; "))};
  }
  partition::MigPartedConfig file;
  const int added = partition::carryOverConfigs(file, sources);
  std::string from = fmt::format("{} configs from {}", added, fmt::join(names, ", "));
  if (!skipped.empty()) from += fmt::format(" (skipped {})", fmt::join(skipped, "; "));
  return create(client, ns, o.migConfigMap,
                json{{"config.yaml", partition::emitMigPartedConfig(file)}}, from);
}

ConfigMapInit initDevicePlugin(kube::KubeClient& client, const ConfigMapsInitOptions& o) {
  const std::string& ns = o.operatorNamespace;
  if (auto found = existing(client, ns, o.devicePluginConfigMap)) return *found;
  const std::string current = policyConfigName(client, "devicePlugin");
  if (!current.empty() && current != o.devicePluginConfigMap) {
    auto cm = client.get(configMapsOf(ns).named(current));
    auto read =
        cm ? partition::readConfigMap(*cm) : core::Result<partition::ConfigMapObject>(cm.status());
    if (read) {
      return create(client, ns, o.devicePluginConfigMap, json(read->data),
                    fmt::format("a copy of {} ({} configs)", current, read->data.size()));
    }
  }
  return create(client, ns, o.devicePluginConfigMap, json{{"default", "version: v1\n"}},
                "key `default`: version: v1 (the plugin's flags as the operator sets them)");
}

}  // namespace

bool ConfigMapsInitReport::ok() const {
  for (const auto& c : configMaps) {
    if (c.outcome == ConfigMapInitOutcome::kFailed) return false;
  }
  return true;
}

bool ConfigMapsInitReport::changed() const {
  for (const auto& c : configMaps) {
    if (c.outcome == ConfigMapInitOutcome::kCreated) return true;
  }
  return false;
}

std::vector<partition::MigPartedConfig> readMigPartedConfigMaps(
    kube::KubeClient& client, const std::string& ns, const std::vector<std::string>& names,
    std::vector<std::string>* skipped) {
  std::vector<partition::MigPartedConfig> out;
  auto skip = [&](const std::string& name, const std::string& why) {
    if (skipped) skipped->push_back(name + ": " + why);
  };
  for (const std::string& name : names) {
    auto cm = client.get(configMapsOf(ns).named(name));
    if (!cm) {
      skip(name, k8s::isNotFound(cm.status()) ? "absent" : cm.status().message());
      continue;
    }
    auto read = partition::readConfigMap(*cm);
    if (!read) {
      skip(name, read.status().message());
      continue;
    }
    auto parsed = partition::parseMigPartedConfig(read->value("config.yaml"));
    if (!parsed) {
      skip(name, "config.yaml: " + parsed.status().message());
      continue;
    }
    out.push_back(std::move(*parsed));
  }
  return out;
}

ConfigMapsInitReport initConfigMaps(kube::KubeClient& client, const ConfigMapsInitOptions& o) {
  ConfigMapsInitReport report;
  report.configMaps.push_back(initMig(client, o));
  report.configMaps.push_back(initDevicePlugin(client, o));
  return report;
}

std::string configMapsInitText(const ConfigMapsInitReport& report) {
  std::string text;
  for (const auto& c : report.configMaps) {
    const char* verb = c.outcome == ConfigMapInitOutcome::kCreated  ? "created"
                       : c.outcome == ConfigMapInitOutcome::kExists ? "exists "
                                                                    : "failed ";
    text += fmt::format("{} {}: {}\n", verb, c.name, c.detail);
  }
  if (report.ok() && !report.changed()) {
    text += "nothing to do: the ConfigMaps exist (left as they are)\n";
  }
  return text;
}

}  // namespace gpuscale::reconciler
