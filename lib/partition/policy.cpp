#include "gpuscale/partition/policy.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <yaml-cpp/yaml.h>

#include "gpuscale/core/yaml_input.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/gpu_product.h"
#include "gpuscale/partition/mps_sharing.h"
#include "quantity.h"

namespace gpuscale::partition {
namespace {

std::chrono::seconds durationField(const YAML::Node& node, std::string_view field) {
  auto d = parseDuration(core::yamlAs<std::string>(node, field));
  if (!d) core::yamlFail(node, std::string(field) + " must be a duration such as 90s or 10m");
  return std::chrono::duration_cast<std::chrono::seconds>(*d);
}

bool isNamespaceName(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
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

std::optional<Lever> parseLever(std::string_view name) {
  if (name == "migReshape") return Lever::kMigReshape;
  if (name == "timeSlicing") return Lever::kTimeSlicing;
  if (name == "mps") return Lever::kMps;
  return std::nullopt;
}

Anticipation parseAnticipation(const YAML::Node& node) {
  Anticipation a;
  forEachField(node, "anticipation", [&](const std::string& k, const YAML::Node& v) {
    if (k == "enabled") {
      a.enabled = core::yamlAs<bool>(v, k);
    } else if (k == "horizon") {
      a.horizon = durationField(v, k);
    } else if (k == "minConfidence") {
      a.minConfidence = core::yamlAs<double>(v, k);
      if (!(a.minConfidence >= 0 && a.minConfidence <= 1))
        core::yamlFail(v, "anticipation.minConfidence must be in [0, 1]");
    } else if (k == "minObservations") {
      a.minObservations = core::yamlAs<int>(v, k);
      if (a.minObservations < 2)
        core::yamlFail(v, "anticipation.minObservations must be at least 2");
    } else if (k == "minSpan") {
      a.minSpan = durationField(v, k);
    } else if (k == "leadTime") {
      forEachField(v, "anticipation.leadTime", [&](const std::string& lk, const YAML::Node& lv) {
        auto lever = parseLever(lk);
        if (!lever) return false;
        a.leadTime[*lever] = durationField(lv, lk);
        return true;
      });
    } else {
      return false;
    }
    return true;
  });
  return a;
}

std::optional<double> memoryField(const YAML::Node& node, std::string_view field) {
  auto bytes = parseQuantity(core::yamlAs<std::string>(node, field));
  if (!bytes || *bytes <= 0) {
    core::yamlFail(node, std::string(field) + " must be a positive quantity such as 4Gi");
  }
  return bytes;
}

MpsPolicy parseMps(const YAML::Node& node) {
  MpsPolicy m;
  forEachField(node, "mps", [&](const std::string& k, const YAML::Node& v) {
    if (k == "maxReplicas") {
      m.maxReplicas = core::yamlAs<int>(v, k);
      if (m.maxReplicas < kMinSharedReplicas || m.maxReplicas > kMpsMaxClientsPerGpu) {
        core::yamlFail(v,
                       "mps.maxReplicas must be in [2, 48] (the device plugin needs 2 or more; "
                       "MPS serves at most 48 clients per GPU)");
      }
    } else if (k == "perPodGpuMemory") {
      m.perPodGpuMemoryBytes = memoryField(v, "perPodGpuMemory");
    } else if (k == "changeBusyNodes") {
      m.changeBusyNodes = core::yamlAs<bool>(v, k);
    } else {
      return false;
    }
    return true;
  });
  return m;
}

MigModeChangePolicy parseMigModeChange(const YAML::Node& node) {
  MigModeChangePolicy m;
  forEachField(node, "migModeChange", [&](const std::string& k, const YAML::Node& v) {
    if (k != "enable") return false;
    m.enable = core::yamlAs<bool>(v, k);
    return true;
  });
  return m;
}

// A list of namespace names, or ["*"] for every namespace; `field` names it in errors.
std::vector<std::string> parseNamespaces(const YAML::Node& v, const std::string& field) {
  auto list = core::yamlAs<std::vector<std::string>>(v, field);
  if (list.empty()) {
    core::yamlFail(v, field + " must list namespaces, or [\"*\"] for every namespace");
  }
  for (const auto& ns : list) {
    if (ns == "*" && list.size() > 1) {
      core::yamlFail(v, field + ": \"*\" (every namespace) cannot be mixed with names");
    }
    if (ns != "*" && !isNamespaceName(ns)) {
      core::yamlFail(v, field + ": \"" + ns + "\" is not a namespace name");
    }
  }
  return list;
}

std::string selectorValues(const YAML::Node& values) {
  std::string out;
  for (const auto& v : core::yamlAs<std::vector<std::string>>(values, "values")) {
    out += (out.empty() ? "" : ",") + v;
  }
  return out;
}

// matchLabels / matchExpressions, turned into the string form and parsed by core::LabelSelector
// (which validates keys and values as the API server does).
core::LabelSelector parseSelector(const YAML::Node& node, const std::string& field) {
  std::vector<std::string> parts;
  forEachField(node, field, [&](const std::string& k, const YAML::Node& v) {
    if (k == "matchLabels") {
      for (const auto& [key, value] : core::yamlAs<std::map<std::string, std::string>>(v, k)) {
        parts.push_back(key + "=" + value);
      }
    } else if (k == "matchExpressions") {
      if (!v.IsSequence()) core::yamlFail(v, "matchExpressions must be a list");
      for (const auto& e : v) {
        std::string key, op;
        std::optional<YAML::Node> values;
        forEachField(e, "matchExpressions entry", [&](const std::string& f, const YAML::Node& fv) {
          if (f == "key") {
            key = core::yamlAs<std::string>(fv, f);
          } else if (f == "operator") {
            op = core::yamlAs<std::string>(fv, f);
          } else if (f == "values") {
            values.emplace(fv);
          } else {
            return false;
          }
          return true;
        });
        const bool listed = values && !values->IsNull() && values->size() > 0;
        if (op == "In" || op == "NotIn") {
          if (!listed) core::yamlFail(e, op + " needs values");
          parts.push_back(key + (op == "In" ? " in (" : " notin (") + selectorValues(*values) +
                          ")");
        } else if (op == "Exists" || op == "DoesNotExist") {
          if (listed) core::yamlFail(e, op + " takes no values");
          parts.push_back((op == "Exists" ? "" : "!") + key);
        } else {
          core::yamlFail(e, "operator must be In, NotIn, Exists or DoesNotExist");
        }
      }
    } else {
      return false;
    }
    return true;
  });
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ",") + part;
  auto selector = core::LabelSelector::parse(text);
  if (!selector) core::yamlFail(node, field + ": " + selector.status().message());
  return *selector;
}

Policy parsePolicy(const YAML::Node& node) {
  Policy p;
  bool hasSelector = false;
  forEachField(node, "policy", [&](const std::string& key, const YAML::Node& v) {
    if (key == "name") {
      p.name = core::yamlAs<std::string>(v, key);
    } else if (key == "hpaNamespaces") {
      p.hpaNamespaces = parseNamespaces(v, key);
    } else if (key == "hpaSelector") {
      hasSelector = true;
      p.hpaSelector = parseSelector(v, key);
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
        auto parsed = parseLever(name);
        if (!parsed) core::yamlFail(l, "levers are migReshape, timeSlicing or mps");
        Lever lever = *parsed;
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
          p.perPodGpuMemoryBytes = memoryField(tv, k);
        } else if (k == "saturation") {
          p.timeSlicingSaturation = core::yamlAs<double>(tv, k);
          if (!(p.timeSlicingSaturation > 0 && p.timeSlicingSaturation <= 1))
            core::yamlFail(tv, "timeSlicing.saturation must be in (0, 1]");
        } else {
          return false;
        }
        return true;
      });
    } else if (key == "mps") {
      p.mps = parseMps(v);
    } else if (key == "sharing") {
      forEachField(v, "sharing", [&](const std::string& k, const YAML::Node& sv) {
        if (k != "acrossNamespaces") return false;
        p.shareAcrossNamespaces = parseNamespaces(sv, "sharing.acrossNamespaces");
        return true;
      });
    } else if (key == "migModeChange") {
      p.migModeChange = parseMigModeChange(v);
    } else if (key == "nodeSelector") {
      p.nodeSelector = core::yamlAs<std::map<std::string, std::string>>(v, key);
    } else if (key == "excludeNodes") {
      if (!v.IsSequence()) core::yamlFail(v, "excludeNodes must be a list of label selectors");
      for (const auto& selector : v) {
        p.excludeNodes.push_back(parseSelector(selector, key));
        if (p.excludeNodes.back().empty())
          core::yamlFail(selector, "excludeNodes: an empty selector would exclude every node");
      }
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
    } else if (key == "migGiveBack") {
      const auto mode = core::yamlAs<std::string>(v, key);
      if (mode != "keep" && mode != "restore") core::yamlFail(v, "migGiveBack is keep or restore");
      p.migRestore = mode == "restore";
    } else if (key == "priority") {
      p.priority = core::yamlAs<int>(v, key);
    } else if (key == "anticipation") {
      p.anticipation = parseAnticipation(v);
    } else if (key == "tolerance") {
      p.tolerance = core::yamlAs<double>(v, key);
      if (!(p.tolerance >= 0 && p.tolerance < 1)) core::yamlFail(v, "tolerance must be in [0, 1)");
    } else {
      return false;
    }
    return true;
  });
  if (p.name.empty()) core::yamlFail(node, "a policy needs a name");
  if (hasSelector && p.hpaNamespaces.empty()) {
    core::yamlFail(node["hpaSelector"],
                   "policy \"" + p.name +
                       "\": hpaSelector needs hpaNamespaces (the namespaces it "
                       "selects in, or [\"*\"])");
  }
  if (p.hpaNamespaces.empty() && p.hpas.empty()) {
    core::yamlFail(node, "policy \"" + p.name +
                             "\" has no HPA scope: set hpaNamespaces (the namespaces whose HPAs "
                             "may use it, or [\"*\"] for every namespace) or hpas");
  }
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
      if (set.byName(p.name) != nullptr) {
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
  switch (lever) {
    case Lever::kMigReshape:
      return "migReshape";
    case Lever::kMps:
      return "mps";
    case Lever::kTimeSlicing:
      break;
  }
  return "timeSlicing";
}

std::optional<double> Policy::mpsPerPodGpuMemoryBytes() const {
  return mps.perPodGpuMemoryBytes ? mps.perPodGpuMemoryBytes : perPodGpuMemoryBytes;
}

bool Policy::selectsNode(const std::map<std::string, std::string>& labels) const {
  if (!selectsAcrossRenames(nodeSelector, labels)) return false;
  if (excludeNodes.empty()) return true;
  const core::Labels asLabels(labels.begin(), labels.end());
  return std::none_of(excludeNodes.begin(), excludeNodes.end(),
                      [&](const core::LabelSelector& s) { return s.matches(asLabels); });
}

int Policy::hardMaxFor(int currentPartitions) const {
  if (hardMaxReplicas) return *hardMaxReplicas;
  return std::max(1, static_cast<int>(std::floor(hardMaxFactor * currentPartitions)));
}

bool Policy::admits(std::string_view ns, std::string_view name,
                    const std::map<std::string, std::string>& labels) const {
  const std::string key = std::string(ns) + "/" + std::string(name);
  if (std::find(hpas.begin(), hpas.end(), key) != hpas.end()) return true;
  const bool inNamespace =
      std::any_of(hpaNamespaces.begin(), hpaNamespaces.end(),
                  [&](const std::string& allowed) { return allowed == "*" || allowed == ns; });
  if (!inNamespace) return false;
  return hpaSelector.empty() || hpaSelector.matches(core::Labels(labels.begin(), labels.end()));
}

const Policy* PolicySet::byName(std::string_view name) const {
  for (const auto& p : policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

PolicyMatch PolicySet::match(std::string_view ns, std::string_view name,
                             const std::map<std::string, std::string>& labels,
                             const std::map<std::string, std::string>& annotations) const {
  PolicyMatch m;
  if (auto annotated = annotations.find(std::string(k8s::kPolicyAnnotation));
      annotated != annotations.end()) {
    const Policy* named = byName(annotated->second);
    if (named != nullptr && named->admits(ns, name, labels)) {
      m.policy = named;
      return m;
    }
    m.ignored = annotated->second;
    m.ignoredWhy = named == nullptr ? "is not defined" : "does not admit this HPA";
  }
  const std::string key = std::string(ns) + "/" + std::string(name);
  for (const auto& p : policies) {
    if (std::find(p.hpas.begin(), p.hpas.end(), key) != p.hpas.end()) {
      m.policy = &p;
      break;
    }
  }
  return m;
}

const Policy* PolicySet::forHpa(std::string_view ns, std::string_view name,
                                const std::map<std::string, std::string>& labels,
                                const std::map<std::string, std::string>& annotations) const {
  return match(ns, name, labels, annotations).policy;
}

core::Result<PolicySet> parsePolicies(std::string_view yaml) {
  return core::guardYaml<PolicySet>("policy", [&] { return parseRoot(yaml); });
}

PolicySet defaultPolicies() {
  Policy p;
  p.name = "default";
  p.hpaNamespaces = {"*"};
  return PolicySet{{p}};
}

}  // namespace gpuscale::partition
