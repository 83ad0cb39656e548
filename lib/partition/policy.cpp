#include "gpuscale/partition/policy.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/enum_names.h"
#include "gpuscale/core/yaml_fields.h"
#include "gpuscale/core/yaml_input.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/gpu_product.h"
#include "gpuscale/partition/mps_sharing.h"
#include "policy_fields.h"
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

constexpr core::EnumNames<Lever, 3> kLeverNames{{
    {Lever::kMigReshape, "migReshape"},
    {Lever::kTimeSlicing, "timeSlicing"},
    {Lever::kMps, "mps"},
}};

std::optional<Lever> parseLever(std::string_view name) {
  return core::enumValue(kLeverNames, name);
}

std::optional<double> memoryField(const YAML::Node& node, std::string_view field) {
  auto bytes = parseQuantity(core::yamlAs<std::string>(node, field));
  if (!bytes || *bytes <= 0) {
    core::yamlFail(node, std::string(field) + " must be a positive quantity such as 4Gi");
  }
  return bytes;
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

// One matchExpressions entry in the string form of core::LabelSelector.
std::string selectorRequirement(const YAML::Node& entry) {
  std::string key, op;
  std::optional<YAML::Node> values;
  core::YamlFields fields("", "matchExpressions entry");
  fields.add("key", "string", "",
             [&key](const YAML::Node& v) { key = core::yamlAs<std::string>(v, "key"); });
  fields.add("operator", "string", "",
             [&op](const YAML::Node& v) { op = core::yamlAs<std::string>(v, "operator"); });
  fields.add("values", "string list", "", [&values](const YAML::Node& v) { values.emplace(v); });
  fields.parse(entry, nullptr);
  const bool listed = values && !values->IsNull() && values->size() > 0;
  if (op == "In" || op == "NotIn") {
    if (!listed) core::yamlFail(entry, op + " needs values");
    return key + (op == "In" ? " in (" : " notin (") + selectorValues(*values) + ")";
  }
  if (op == "Exists" || op == "DoesNotExist") {
    if (listed) core::yamlFail(entry, op + " takes no values");
    return (op == "Exists" ? "" : "!") + key;
  }
  core::yamlFail(entry, "operator must be In, NotIn, Exists or DoesNotExist");
}

// matchLabels / matchExpressions, turned into the string form and parsed by core::LabelSelector
// (which validates keys and values as the API server does).
core::LabelSelector parseSelector(const YAML::Node& node, const std::string& field) {
  std::vector<std::string> parts;
  core::YamlFields fields("", field);
  fields.add("matchLabels", "string map", "", [&parts](const YAML::Node& v) {
    for (const auto& [key, value] :
         core::yamlAs<std::map<std::string, std::string>>(v, "matchLabels")) {
      parts.push_back(key + "=" + value);
    }
  });
  fields.add("matchExpressions", "list", "", [&parts](const YAML::Node& v) {
    if (!v.IsSequence()) core::yamlFail(v, "matchExpressions must be a list");
    for (const auto& e : v) parts.push_back(selectorRequirement(e));
  });
  fields.parse(node, nullptr);
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ",") + part;
  auto selector = core::LabelSelector::parse(text);
  if (!selector) core::yamlFail(node, field + ": " + selector.status().message());
  return *selector;
}

std::string durationText(std::chrono::seconds d) { return core::formatGoDuration(d); }

std::string numberText(double value) { return fmt::format("{}", value); }

std::string leverList(const std::vector<Lever>& levers) {
  std::string out;
  for (Lever lever : levers)
    out += std::string(out.empty() ? "" : ", ") + std::string(leverName(lever));
  return "[" + out + "]";
}

// A setter that stores an integer of at least `min` at `target` (`path`: the key in the message).
core::YamlFields::Setter atLeastSetter(int* target, std::string path, int min) {
  return [target, path, min](const YAML::Node& v) {
    *target = core::yamlAs<int>(v, path.substr(path.rfind('.') + 1));
    if (*target < min) core::yamlFail(v, path + " must be at least " + std::to_string(min));
  };
}

// A setter that stores the duration at `target`.
core::YamlFields::Setter durationSetter(std::chrono::seconds* target, std::string key) {
  return [target, key](const YAML::Node& v) { *target = durationField(v, key); };
}

void declareAnticipation(core::YamlFields& f, Anticipation& a) {
  f.add("enabled", "boolean", "false: act only at the ceiling, never ahead of it",
        [&a](const YAML::Node& v) { a.enabled = core::yamlAs<bool>(v, "enabled"); })
      .defaultText(a.enabled ? "true" : "false");
  f.add("horizon", "duration", "how far ahead a prediction may look",
        durationSetter(&a.horizon, "horizon"))
      .defaultText(durationText(a.horizon));
  f.add("minConfidence", "number", "the confidence (0..1) a prediction needs to be acted on",
        [&a](const YAML::Node& v) {
          a.minConfidence = core::yamlAs<double>(v, "minConfidence");
          if (!(a.minConfidence >= 0 && a.minConfidence <= 1))
            core::yamlFail(v, "anticipation.minConfidence must be in [0, 1]");
        })
      .defaultText(numberText(a.minConfidence));
  f.add("minObservations", "integer", "HPA observations a trend needs (at least 2)",
        atLeastSetter(&a.minObservations, "anticipation.minObservations", 2))
      .defaultText(std::to_string(a.minObservations));
  f.add("minSpan", "duration",
        "the time those observations must span (a start-up transient is not a trend)",
        durationSetter(&a.minSpan, "minSpan"))
      .defaultText(durationText(a.minSpan));
  f.addMapping("leadTime",
               "time to new capacity per lever; the floor of what the reconciler measures",
               [&a](core::YamlFields& lead) {
                 for (Lever lever : {Lever::kTimeSlicing, Lever::kMigReshape, Lever::kMps}) {
                   const std::string name(leverName(lever));
                   lead.add(name, "duration", "the " + name + " lever's lead time",
                            durationSetter(&a.leadTime[lever], name))
                       .defaultText(durationText(a.leadTime[lever]));
                 }
               });
}

void declareTimeSlicing(core::YamlFields& f, Policy& p) {
  f.add("maxReplicas", "integer", "replicas per device (GPU or MIG instance), at least 1",
        atLeastSetter(&p.maxTimeSlicingReplicas, "timeSlicing.maxReplicas", 1))
      .defaultText(std::to_string(p.maxTimeSlicingReplicas));
  f.add("perPodGpuMemory", "quantity",
        "GPU memory one pod needs: replicas never exceed partition memory / this (unset: no "
        "memory bound)",
        [&p](const YAML::Node& v) { p.perPodGpuMemoryBytes = memoryField(v, "perPodGpuMemory"); });
  f.add("saturation", "number",
        "utilisation (0..1] at which devices are time-sliced only when no reshape adds capacity",
        [&p](const YAML::Node& v) {
          p.timeSlicingSaturation = core::yamlAs<double>(v, "saturation");
          if (!(p.timeSlicingSaturation > 0 && p.timeSlicingSaturation <= 1))
            core::yamlFail(v, "timeSlicing.saturation must be in (0, 1]");
        })
      .defaultText(numberText(p.timeSlicingSaturation));
}

void declareMps(core::YamlFields& f, MpsPolicy& m) {
  f.add("maxReplicas", "integer",
        "replicas per GPU, 2..48; memory and compute are split evenly between them",
        [&m](const YAML::Node& v) {
          m.maxReplicas = core::yamlAs<int>(v, "maxReplicas");
          if (m.maxReplicas < kMinSharedReplicas || m.maxReplicas > kMpsMaxClientsPerGpu) {
            core::yamlFail(v,
                           "mps.maxReplicas must be in [2, 48] (the device plugin needs 2 or "
                           "more; MPS serves at most 48 clients per GPU)");
          }
        })
      .defaultText(std::to_string(m.maxReplicas));
  f.add("perPodGpuMemory", "quantity",
        "GPU memory one pod needs under MPS (unset: timeSlicing.perPodGpuMemory)",
        [&m](const YAML::Node& v) { m.perPodGpuMemoryBytes = memoryField(v, "perPodGpuMemory"); });
  f.add("changeBusyNodes", "boolean",
        "true: also change nodes whose GPUs hold pods (their MPS daemon restarts)",
        [&m](const YAML::Node& v) { m.changeBusyNodes = core::yamlAs<bool>(v, "changeBusyNodes"); })
      .defaultText(m.changeBusyNodes ? "true" : "false");
}

}  // namespace

void declarePolicyFields(core::YamlFields& f, Policy& p, bool* hasSelector) {
  f.add(
      "name", "string",
      "the policy's name, which an HPA's gpuscale.io/partition-policy annotation names (required)",
      [&p](const YAML::Node& v) { p.name = core::yamlAs<std::string>(v, "name"); });
  f.add("hpaNamespaces", "string list",
        "namespaces whose HPAs may opt in with the annotation; [\"*\"]: every namespace",
        [&p](const YAML::Node& v) { p.hpaNamespaces = parseNamespaces(v, "hpaNamespaces"); });
  f.add("hpaSelector", "label selector",
        "matchLabels / matchExpressions (In, NotIn, Exists, DoesNotExist) on the HPA's own labels, "
        "within hpaNamespaces (unset: every HPA there)",
        [&p, hasSelector](const YAML::Node& v) {
          *hasSelector = true;
          p.hpaSelector = parseSelector(v, "hpaSelector");
        });
  f.add("hpas", "string list", "HPAs (namespace/name) managed without the annotation",
        [&p](const YAML::Node& v) {
          p.hpas = core::yamlAs<std::vector<std::string>>(v, "hpas");
          for (const auto& h : p.hpas) {
            if (std::count(h.begin(), h.end(), '/') != 1)
              core::yamlFail(v, "hpas entries must be namespace/name");
          }
        });
  f.add("levers", "string list", "migReshape, timeSlicing, mps: tried in this order",
        [&p](const YAML::Node& v) {
          p.levers.clear();
          for (const auto& l : v) {
            auto name = core::yamlAs<std::string>(l, "levers");
            auto parsed = parseLever(name);
            if (!parsed) core::yamlFail(l, "levers are migReshape, timeSlicing or mps");
            if (std::find(p.levers.begin(), p.levers.end(), *parsed) != p.levers.end()) {
              core::yamlFail(l, "lever \"" + name + "\" is listed twice");
            }
            p.levers.push_back(*parsed);
          }
        })
      .defaultText(leverList(p.levers));
  f.add("migProfiles", "string list",
        "MIG profiles a reshape may create (1g.5gb, ...; unset: the model's base profiles)",
        [&p](const YAML::Node& v) {
          auto list = core::yamlAs<std::vector<std::string>>(v, "migProfiles");
          p.migProfiles = {list.begin(), list.end()};
        });
  f.addMapping("timeSlicing", "the time-slicing lever",
               [&p](core::YamlFields& fields) { declareTimeSlicing(fields, p); });
  f.addMapping("mps", "the MPS lever (levers: [..., mps]); whole GPUs only",
               [&p](core::YamlFields& fields) { declareMps(fields, p.mps); });
  f.addMapping(
      "sharing", "who may end up on one GPU that time-slicing or MPS shares (gpu_tenancy.h)",
      [&p](core::YamlFields& fields) {
        fields.add("acrossNamespaces", "string list",
                   "namespaces whose pods may share a GPU with one another; [\"*\"]: "
                   "any (unset: only pods of one namespace share a GPU)",
                   [&p](const YAML::Node& v) {
                     p.shareAcrossNamespaces = parseNamespaces(v, "sharing.acrossNamespaces");
                   });
      });
  f.addMapping("migModeChange",
               "switching MIG on for an idle whole GPU of a MIG-capable model (and off again on "
               "give-back)",
               [&p](core::YamlFields& fields) {
                 fields
                     .add("enabled", "boolean",
                          "true: a reshape may switch a GPU's MIG mode, on nodes with no GPU pod "
                          "(a mode change resets GPUs and may reboot the node)",
                          [&p](const YAML::Node& v) {
                            p.migModeChange.enabled = core::yamlAs<bool>(v, "enabled");
                          })
                     .defaultText(p.migModeChange.enabled ? "true" : "false")
                     .deprecatedName("enable");
               });
  f.add("nodeSelector", "string map", "labels a node must have to be changed (unset: every node)",
        [&p](const YAML::Node& v) {
          p.nodeSelector = core::yamlAs<std::map<std::string, std::string>>(v, "nodeSelector");
        });
  f.add("excludeNodes", "list of label selectors",
        "a node any of them matches is never changed (pools whose MIG profile the platform fixes)",
        [&p](const YAML::Node& v) {
          if (!v.IsSequence()) core::yamlFail(v, "excludeNodes must be a list of label selectors");
          for (const auto& selector : v) {
            p.excludeNodes.push_back(parseSelector(selector, "excludeNodes"));
            if (p.excludeNodes.back().empty())
              core::yamlFail(selector, "excludeNodes: an empty selector would exclude every node");
          }
        });
  f.addMapping("maxReplicas", "the cap gpuscale raises an HPA's maxReplicas to",
               [&p](core::YamlFields& fields) {
                 fields.add("hard", "integer",
                            "an absolute cap, at least 1 (unset: factor x current partitions)",
                            [&p](const YAML::Node& v) {
                              p.hardMaxReplicas = core::yamlAs<int>(v, "hard");
                              if (*p.hardMaxReplicas < 1)
                                core::yamlFail(v, "maxReplicas.hard must be at least 1");
                            });
                 fields
                     .add("factor", "number",
                          "the cap as a multiple (at least 1) of the partitions the HPA's pods "
                          "can get now",
                          [&p](const YAML::Node& v) {
                            p.hardMaxFactor = core::yamlAs<double>(v, "factor");
                            if (!(p.hardMaxFactor >= 1))
                              core::yamlFail(v, "maxReplicas.factor must be at least 1");
                          })
                     .defaultText(numberText(p.hardMaxFactor));
               });
  f.addMapping("cooldown", "waits between changes for one HPA", [&p](core::YamlFields& fields) {
    fields
        .add("scaleUp", "duration", "after a change, before the next raise",
             durationSetter(&p.scaleUpCooldown, "scaleUp"))
        .defaultText(durationText(p.scaleUpCooldown));
    fields
        .add("scaleDown", "duration", "after a raise, before its capacity is given back",
             durationSetter(&p.scaleDownCooldown, "scaleDown"))
        .defaultText(durationText(p.scaleDownCooldown));
  });
  f.add("migGiveBack", "keep or restore",
        "restore: rebuild a node gpuscale reshaped for a burst back to its config before, once its "
        "GPUs are idle",
        [&p](const YAML::Node& v) {
          const auto mode = core::yamlAs<std::string>(v, "migGiveBack");
          if (mode != "keep" && mode != "restore")
            core::yamlFail(v, "migGiveBack is keep or restore");
          p.migRestore = mode == "restore";
        })
      .defaultText(p.migRestore ? "restore" : "keep");
  f.add("priority", "integer",
        "who gets idle GPUs first when HPAs compete (unset: the lowest spec.priority of the HPA's "
        "running pods)",
        [&p](const YAML::Node& v) { p.priority = core::yamlAs<int>(v, "priority"); });
  f.addMapping("anticipation", "acting before the ceiling, on a forecast of the HPA's demand",
               [&p](core::YamlFields& fields) { declareAnticipation(fields, p.anticipation); });
  f.add("tolerance", "number",
        "the HPA controller's tolerance [0, 1), for the wanted-replica formula",
        [&p](const YAML::Node& v) {
          p.tolerance = core::yamlAs<double>(v, "tolerance");
          if (!(p.tolerance >= 0 && p.tolerance < 1))
            core::yamlFail(v, "tolerance must be in [0, 1)");
        })
      .defaultText(numberText(p.tolerance));
}

namespace {

Policy parsePolicy(const YAML::Node& node, std::vector<std::string>* warnings) {
  Policy p;
  bool hasSelector = false;
  core::YamlFields fields("", "policy");
  declarePolicyFields(fields, p, &hasSelector);
  fields.parse(node, warnings);
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

PolicySet parsePolicyRoot(std::string_view text) {
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
      Policy p = parsePolicy(node, &set.warnings);
      if (set.byName(p.name) != nullptr) {
        core::yamlFail(node, "policy \"" + p.name + "\" is defined twice");
      }
      set.policies.push_back(std::move(p));
    }
  } else {
    set.policies.push_back(parsePolicy(root, &set.warnings));
  }
  return set;
}

}  // namespace

std::string_view leverName(Lever lever) {
  return core::enumName(kLeverNames, lever, "timeSlicing");
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
  return core::guardYaml<PolicySet>("policy", [&] { return parsePolicyRoot(yaml); });
}

PolicySet defaultPolicies() {
  Policy p;
  p.name = "default";
  p.hpaNamespaces = {"*"};
  PolicySet set;
  set.policies.push_back(std::move(p));
  return set;
}

}  // namespace gpuscale::partition
