#include "gpuscale/partition/policy.h"

#include <algorithm>
#include <cmath>

#include <yaml-cpp/yaml.h>

#include "gpuscale/core/yaml_input.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "quantity.h"

namespace gpuscale::partition {
namespace {

std::chrono::seconds durationField(const YAML::Node& node, std::string_view field) {
  auto d = parseDuration(core::yamlAs<std::string>(node, field));
  if (!d) core::yamlFail(node, std::string(field) + " must be a duration such as 90s or 10m");
  return std::chrono::duration_cast<std::chrono::seconds>(*d);
}

template <typename Handle>
void forEachField(const YAML::Node& node, std::string_view what, Handle&& handle) {
  if (!node.IsMap()) core::yamlFail(node, std::string(what) + " must be a mapping");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    if (!handle(key, kv.second))
      core::yamlFail(kv.first, "unexpected field \"" + key + "\" in " + std::string(what));
  }
}

Policy parsePolicy(const YAML::Node& node) {
  Policy p;
  forEachField(node, "policy", [&](const std::string& key, const YAML::Node& v) {
    if (key == "name") {
      p.name = core::yamlAs<std::string>(v, key);
    } else if (key == "hpas") {
      p.hpas = core::yamlAs<std::vector<std::string>>(v, key);
      for (const auto& h : p.hpas) {
        if (std::count(h.begin(), h.end(), '/') != 1)
          core::yamlFail(v, "hpas entries must be namespace/name");
      }
    } else if (key == "levers") {
      p.levers.clear();
      for (const auto& l : v) {
        auto name = core::yamlAs<std::string>(l, key);
        Lever lever =
            name == "migReshape" ? Lever::kMigReshape
            : name == "timeSlicing"
                ? Lever::kTimeSlicing
                : (core::yamlFail(l, "levers are migReshape or timeSlicing"), Lever::kMigReshape);
        if (std::find(p.levers.begin(), p.levers.end(), lever) != p.levers.end()) {
          core::yamlFail(l, "lever \"" + name + "\" is listed twice");
        }
        p.levers.push_back(lever);
      }
    } else if (key == "migProfiles") {
      auto list = core::yamlAs<std::vector<std::string>>(v, key);
      p.migProfiles = {list.begin(), list.end()};
    } else if (key == "timeSlicing") {
      forEachField(v, "timeSlicing", [&](const std::string& k, const YAML::Node& tv) {
        if (k == "maxReplicas") {
          p.maxTimeSlicingReplicas = core::yamlAs<int>(tv, k);
          if (p.maxTimeSlicingReplicas < 1)
            core::yamlFail(tv, "timeSlicing.maxReplicas must be at least 1");
        } else if (k == "perPodGpuMemory") {
          p.perPodGpuMemoryBytes = parseQuantity(core::yamlAs<std::string>(tv, k));
          if (!p.perPodGpuMemoryBytes || *p.perPodGpuMemoryBytes <= 0) {
            core::yamlFail(tv, "perPodGpuMemory must be a positive quantity such as 4Gi");
          }
        } else {
          return false;
        }
        return true;
      });
    } else if (key == "nodeSelector") {
      p.nodeSelector = core::yamlAs<std::map<std::string, std::string>>(v, key);
    } else if (key == "maxReplicas") {
      forEachField(v, "maxReplicas", [&](const std::string& k, const YAML::Node& mv) {
        if (k == "hard") {
          p.hardMaxReplicas = core::yamlAs<int>(mv, k);
          if (*p.hardMaxReplicas < 1) core::yamlFail(mv, "maxReplicas.hard must be at least 1");
        } else if (k == "factor") {
          p.hardMaxFactor = core::yamlAs<double>(mv, k);
          if (!(p.hardMaxFactor >= 1)) core::yamlFail(mv, "maxReplicas.factor must be at least 1");
        } else {
          return false;
        }
        return true;
      });
    } else if (key == "cooldown") {
      forEachField(v, "cooldown", [&](const std::string& k, const YAML::Node& cv) {
        if (k == "scaleUp") {
          p.scaleUpCooldown = durationField(cv, k);
        } else if (k == "scaleDown") {
          p.scaleDownCooldown = durationField(cv, k);
        } else {
          return false;
        }
        return true;
      });
    } else if (key == "tolerance") {
      p.tolerance = core::yamlAs<double>(v, key);
      if (!(p.tolerance >= 0 && p.tolerance < 1)) core::yamlFail(v, "tolerance must be in [0, 1)");
    } else {
      return false;
    }
    return true;
  });
  if (p.name.empty()) core::yamlFail(node, "a policy needs a name");
  return p;
}

PolicySet parseRoot(std::string_view text) {
  YAML::Node root = YAML::Load(std::string(text));
  if (!root.IsMap()) core::yamlFail(root, "a policy file must be a mapping");
  PolicySet set;
  if (root["policies"]) {
    if (root.size() != 1)
      core::yamlFail(root, "a file with \"policies\" may have no other top-level field");
    const YAML::Node list = root["policies"];
    if (!list.IsSequence() || list.size() == 0)
      core::yamlFail(list, "policies must be a non-empty list");
    for (const auto& node : list) {
      Policy p = parsePolicy(node);
      if (set.forHpa("", "", {{std::string(k8s::kPolicyAnnotation), p.name}}) != nullptr) {
        core::yamlFail(node, "policy \"" + p.name + "\" is defined twice");
      }
      set.policies.push_back(std::move(p));
    }
  } else {
    set.policies.push_back(parsePolicy(root));
  }
  return set;
}

}  // namespace

std::string_view leverName(Lever lever) {
  return lever == Lever::kMigReshape ? "migReshape" : "timeSlicing";
}

bool Policy::selectsNode(const std::map<std::string, std::string>& labels) const {
  return std::all_of(nodeSelector.begin(), nodeSelector.end(), [&](const auto& kv) {
    auto it = labels.find(kv.first);
    return it != labels.end() && it->second == kv.second;
  });
}

int Policy::hardMaxFor(int currentPartitions) const {
  if (hardMaxReplicas) return *hardMaxReplicas;
  return std::max(1, static_cast<int>(std::floor(hardMaxFactor * currentPartitions)));
}

const Policy* PolicySet::forHpa(std::string_view ns, std::string_view name,
                                const std::map<std::string, std::string>& annotations) const {
  auto annotated = annotations.find(std::string(k8s::kPolicyAnnotation));
  const std::string key = std::string(ns) + "/" + std::string(name);
  for (const auto& p : policies) {
    if (annotated != annotations.end() && annotated->second == p.name) return &p;
  }
  for (const auto& p : policies) {
    if (std::find(p.hpas.begin(), p.hpas.end(), key) != p.hpas.end()) return &p;
  }
  return nullptr;
}

core::Result<PolicySet> parsePolicies(std::string_view yaml) {
  return core::guardYaml<PolicySet>("policy", [&] { return parseRoot(yaml); });
}

PolicySet defaultPolicies() {
  Policy p;
  p.name = "default";
  return PolicySet{{p}};
}

}  // namespace gpuscale::partition
