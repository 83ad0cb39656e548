#include "gpuscale/reconciler/preflight.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actuator_internal.h"
#include "gpuscale/core/enum_names.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/scale_target_watch.h"

namespace gpuscale::reconciler {
namespace {

using k8s::fieldAt;
using k8s::stringAt;
using nlohmann::json;

constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";
constexpr std::string_view kGpuPresentLabel = "nvidia.com/gpu.present";
constexpr std::string_view kActHint =
    "act mode's grants: helm --set reconciler.mode=act, or the kustomize component "
    "manifests/reconciler/components/act";

PreflightCheck checkApi(kube::KubeClient& client) {
  auto version = client.getPath("/version");
  if (!version) {
    return {"api", CheckOutcome::kFail,
            "kube-apiserver does not answer: " + version.status().message(),
            "check --kubeconfig (in a pod: the ServiceAccount token and KUBERNETES_SERVICE_HOST)"};
  }
  const std::string git = stringAt(*version, {"gitVersion"});
  return {"api", CheckOutcome::kOk, "kube-apiserver " + (git.empty() ? "answers" : git), ""};
}

// One SelfSubjectAccessReview: allowed, or the reason it could not be asked.
core::Result<bool> allowed(kube::KubeClient& client, const Permission& p) {
  json attributes = {{"verb", p.verb}, {"group", p.group}, {"resource", p.resource}};
  if (!p.subresource.empty()) attributes["subresource"] = p.subresource;
  if (!p.ns.empty()) attributes["namespace"] = p.ns;
  if (!p.name.empty()) attributes["name"] = p.name;
  const json review = {{"apiVersion", "authorization.k8s.io/v1"},
                       {"kind", "SelfSubjectAccessReview"},
                       {"spec", {{"resourceAttributes", attributes}}}};
  auto answer = client.create(
      kube::ResourceRef::collection("authorization.k8s.io", "v1", "selfsubjectaccessreviews"),
      review);
  if (!answer) return answer.status();
  const json& granted = fieldAt(*answer, {"status", "allowed"});
  return granted.is_boolean() && granted.get<bool>();
}

PreflightCheck checkPermissions(kube::KubeClient& client, const PreflightOptions& options) {
  const auto needed = actPermissions(options);
  std::vector<std::string> missing;
  for (const auto& p : needed) {
    auto ok = allowed(client, p);
    if (!ok) {
      return {"permissions", CheckOutcome::kFail,
              "cannot ask SelfSubjectAccessReviews: " + ok.status().message(),
              "any authenticated identity may create them; check the kube-apiserver's authorizers"};
    }
    if (!*ok) missing.push_back(p.text());
  }
  if (missing.empty()) {
    return {"permissions", CheckOutcome::kOk,
            fmt::format("all {} permissions act mode needs are granted", needed.size()), ""};
  }
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  return {"permissions", CheckOutcome::kFail,
          fmt::format("{} of {} permissions act mode needs are missing: {}", missing.size(),
                      needed.size(), list),
          std::string(kActHint)};
}

// The group versions of the kinds the controller watches that the cluster may not serve (the DRA
// kinds): not served is a warning (what needs them is not planned); served, the reads the
// controller's informers need (list and watch on each), a failure when missing.
void checkOptionalApis(kube::KubeClient& client, std::vector<PreflightCheck>& out) {
  std::map<std::string, std::vector<const WatchedResource*>> byGroupVersion;
  for (const auto& w : watchedResources()) {
    if (w.optional) byGroupVersion[std::string(w.group) + "/" + w.version].push_back(&w);
  }
  for (const auto& [groupVersion, kinds] : byGroupVersion) {
    const std::string check = "api " + groupVersion;
    std::string names;
    for (const auto* w : kinds) names += (names.empty() ? "" : ", ") + std::string(w->resource);
    auto discovery = client.getPath("/apis/" + groupVersion);
    if (!discovery) {
      out.push_back(
          {check, CheckOutcome::kWarn,
           k8s::isNotFound(discovery.status())
               ? groupVersion + " is not served: " + names + " are not watched and planned"
               : "cannot read the discovery of " + groupVersion + ": " +
                     discovery.status().message(),
           groupVersion.starts_with("gpuscale.io/")
               ? "the reconciler looks for it again every minute; install the GPUCapacityRequest "
                 "CRD (the chart's crds/, manifests/crds) for planners to request capacity"
               : "the reconciler looks for it again every minute; nothing to do unless GPUs are "
                 "allocated through it"});
      continue;
    }
    std::vector<std::string> missing;
    for (const auto* w : kinds) {
      for (const char* verb : {"list", "watch"}) {
        const Permission p{verb, w->group, w->resource, "", "", ""};
        auto ok = allowed(client, p);
        if (!ok || !*ok) missing.push_back(p.text());
      }
    }
    if (missing.empty()) {
      out.push_back(
          {check, CheckOutcome::kOk, "served; " + names + " may be listed and watched", ""});
      continue;
    }
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    out.push_back({check, CheckOutcome::kFail, "served, but the reconciler may not: " + list,
                   "the shipped RBAC grants them (manifests/reconciler/rbac.yaml, the chart); "
                   "without them the reconciler plans as if there were none"});
  }
}

PreflightCheck checkOperatorNamespace(kube::KubeClient& client, const PreflightOptions& o) {
  auto ns =
      client.get(kube::ResourceRef::collection("", "v1", "namespaces").named(o.operatorNamespace));
  if (ns) return {"operator-namespace", CheckOutcome::kOk, "namespace " + o.operatorNamespace, ""};
  if (k8s::isNotFound(ns.status())) {
    return {"operator-namespace", CheckOutcome::kFail, "no namespace " + o.operatorNamespace,
            "install the NVIDIA GPU Operator, or give its namespace with --operator-namespace"};
  }
  return {"operator-namespace", CheckOutcome::kWarn,
          "cannot read namespace " + o.operatorNamespace + ": " + ns.status().message(),
          "judged from its ConfigMaps below"};
}

// A ConfigMap check: ok when present; when absent, `absent` says how bad that is and why.
PreflightCheck checkConfigMap(kube::KubeClient& client, const std::string& check,
                              const std::string& ns, const std::string& name, CheckOutcome absent,
                              const std::string& absentHint) {
  auto cm = client.get(actuator_detail::configMapRef(ns, name));
  if (cm) return {check, CheckOutcome::kOk, "ConfigMap " + ns + "/" + name, ""};
  if (k8s::isNotFound(cm.status())) {
    return {check, absent, "no ConfigMap " + ns + "/" + name, absentHint};
  }
  return {check, CheckOutcome::kFail,
          "cannot read ConfigMap " + ns + "/" + name + ": " + cm.status().message(),
          std::string(kActHint)};
}

// The ClusterPolicy's field `path` names `want`, or a fail with the patch that makes it so.
void checkPolicyField(const json& policy, const char* component, const std::string& want,
                      std::vector<PreflightCheck>& out) {
  const std::string name = stringAt(policy, {"metadata", "name"});
  const std::string field = std::string("spec.") + component + ".config.name";
  const std::string have = stringAt(policy, {"spec", component, "config", "name"});
  const std::string check = "cluster-policy " + name;
  if (have == want) {
    out.push_back({check, CheckOutcome::kOk, field + " is " + want, ""});
    return;
  }
  out.push_back({check, CheckOutcome::kFail,
                 field + " is " + (have.empty() ? "not set" : have) + ", not " + want,
                 fmt::format("kubectl patch clusterpolicy {} --type=merge -p "
                             "'{{\"spec\":{{\"{}\":{{\"config\":{{\"name\":\"{}\"}}}}}}}}'",
                             name, component, want)});
}

void checkClusterPolicies(kube::KubeClient& client, const PreflightOptions& o,
                          std::vector<PreflightCheck>& out) {
  auto policies =
      client.list(kube::ResourceRef::collection("nvidia.com", "v1", "clusterpolicies"), {});
  if (!policies) {
    if (k8s::isNotFound(policies.status())) {
      out.push_back({"cluster-policy", CheckOutcome::kWarn,
                     "no ClusterPolicy resource (nvidia.com/v1): the GPU Operator is not installed "
                     "by its operator",
                     "make mig-manager read " + o.migConfigMap + " and the device plugin " +
                         o.devicePluginConfigMap + " as your installation allows"});
    } else {
      out.push_back({"cluster-policy", CheckOutcome::kWarn,
                     "cannot read ClusterPolicies: " + policies.status().message(),
                     "run preflight with a kubeconfig that may read them (the reconciler itself "
                     "need not)"});
    }
    return;
  }
  if (policies->items.empty()) {
    out.push_back({"cluster-policy", CheckOutcome::kFail, "no ClusterPolicy object",
                   "install the GPU Operator's ClusterPolicy"});
    return;
  }
  for (const auto& policy : policies->items) {
    checkPolicyField(policy, "migManager", o.migConfigMap, out);
    checkPolicyField(policy, "devicePlugin", o.devicePluginConfigMap, out);
    const std::string strategy = stringAt(policy, {"spec", "mig", "strategy"});
    out.push_back({"cluster-policy " + stringAt(policy, {"metadata", "name"}), CheckOutcome::kOk,
                   "spec.mig.strategy is " + (strategy.empty() ? "single (the default)" : strategy),
                   ""});
  }
}

// The first item of `list` whose name contains `part`, or null.
const json* named(const kube::ObjectList& list, std::string_view part) {
  for (const auto& item : list.items) {
    if (stringAt(item, {"metadata", "name"}).find(part) != std::string::npos) return &item;
  }
  return nullptr;
}

// The GPU Operator's own Deployment (its release, from the image tag) and the two operands the
// reconciler works through, by their DaemonSets. Informational: a GPU Operator installed another
// way, or a namespace this identity may not list, is a warning.
void checkOperatorWorkloads(kube::KubeClient& client, const PreflightOptions& o,
                            std::vector<PreflightCheck>& out) {
  const std::string& ns = o.operatorNamespace;
  auto deployments =
      client.list(kube::ResourceRef::collection("apps", "v1", "deployments", ns), {});
  if (!deployments) {
    out.push_back({"gpu-operator", CheckOutcome::kWarn,
                   "cannot list Deployments in " + ns + ": " + deployments.status().message(),
                   "its release is not known; a kubeconfig that may read them tells"});
  } else if (const json* op = named(*deployments, "gpu-operator"); op == nullptr) {
    out.push_back({"gpu-operator", CheckOutcome::kWarn, "no gpu-operator Deployment in " + ns,
                   "the GPU Operator runs elsewhere or not at all; its operands below say more"});
  } else {
    const auto& containers = fieldAt(*op, {"spec", "template", "spec", "containers"});
    const std::string image = containers.is_array() && !containers.empty()
                                  ? stringAt(containers[0], {"image"})
                                  : std::string();
    const auto colon = image.rfind(':');
    const std::string release =
        colon == std::string::npos || image.find('/', colon) != std::string::npos
            ? "unknown"
            : image.substr(colon + 1);
    out.push_back({"gpu-operator", CheckOutcome::kOk,
                   fmt::format("Deployment {}/{}, release {}", ns,
                               stringAt(*op, {"metadata", "name"}), release),
                   ""});
  }
  auto daemonSets = client.list(kube::ResourceRef::collection("apps", "v1", "daemonsets", ns), {});
  const std::pair<const char*, const char*> operands[] = {
      {"mig-manager",
       "no MIG change is answered without it (ClusterPolicy spec.migManager.enabled); nodes "
       "without nvidia.com/mig.config.state are never reshaped"},
      {"device-plugin",
       "no GPU resource is advertised without it (ClusterPolicy spec.devicePlugin.enabled)"},
  };
  for (const auto& [operand, absentHint] : operands) {
    if (!daemonSets) {
      out.push_back({operand, CheckOutcome::kWarn,
                     "cannot list DaemonSets in " + ns + ": " + daemonSets.status().message(),
                     "the per-node checks below say what the operands report"});
      continue;
    }
    const json* ds = named(*daemonSets, operand);
    if (ds == nullptr) {
      out.push_back({operand, CheckOutcome::kWarn,
                     fmt::format("no {} DaemonSet in {}", operand, ns), absentHint});
      continue;
    }
    const auto count = [&](std::string_view field) {
      const json& v = fieldAt(*ds, {"status", field});
      return v.is_number_integer() ? v.get<int64_t>() : 0;
    };
    const int64_t ready = count("numberReady"), desired = count("desiredNumberScheduled");
    out.push_back({operand,
                   ready == desired && desired > 0 ? CheckOutcome::kOk : CheckOutcome::kWarn,
                   fmt::format("DaemonSet {}/{}: {} of {} ready", ns,
                               stringAt(*ds, {"metadata", "name"}), ready, desired),
                   ready == desired && desired > 0 ? "" : "wait until every pod of it is ready"});
  }
}

// How many of the GPU nodes each policy may change.
void checkPolicyScope(const partition::PolicySet& policies,
                      const std::vector<partition::NodeObject>& gpuNodes,
                      std::vector<PreflightCheck>& out) {
  for (const auto& policy : policies.policies) {
    const auto inScope = std::count_if(gpuNodes.begin(), gpuNodes.end(), [&](const auto& node) {
      return policy.selectsNode(node.meta.labels);
    });
    const std::string detail =
        fmt::format("{} of {} GPU node(s) in scope", inScope, gpuNodes.size());
    if (inScope == 0) {
      out.push_back({"policy " + policy.name, CheckOutcome::kWarn, detail,
                     "its nodeSelector or excludeNodes leave it no node to change"});
    } else {
      out.push_back({"policy " + policy.name, CheckOutcome::kOk, detail, ""});
    }
  }
}

void checkNodes(kube::KubeClient& client, const PreflightOptions& o,
                std::vector<PreflightCheck>& out) {
  auto nodes = client.list(kube::ResourceRef::collection("", "v1", "nodes"), {});
  if (!nodes) {
    out.push_back({"gpu-nodes", CheckOutcome::kFail,
                   "cannot list Nodes: " + nodes.status().message(), std::string(kActHint)});
    return;
  }
  std::vector<PreflightCheck> perNode;
  std::vector<partition::NodeObject> gpuNodes;
  for (const auto& item : nodes->items) {
    auto node = partition::readNode(item);
    if (!node) continue;  // a Node the planner cannot read is none it could change either
    const std::string product = node->meta.label(kGpuProductLabel);
    if (product.empty() && node->meta.label(kGpuPresentLabel) != "true") continue;
    const std::string name = node->meta.name;
    const std::string config = node->meta.label(k8s::kMigConfigLabel);
    const std::string state = node->meta.label(k8s::kMigConfigStateLabel);
    gpuNodes.push_back(std::move(*node));
    PreflightCheck c{"node " + name, CheckOutcome::kOk,
                     fmt::format("{}, {}={}, {}={}", product.empty() ? "GPU" : product,
                                 k8s::kMigConfigLabel, config.empty() ? "(none)" : config,
                                 k8s::kMigConfigStateLabel, state.empty() ? "(none)" : state),
                     ""};
    if (state == "failed") {
      c.outcome = CheckOutcome::kFail;
      c.hint = "mig-manager failed the node's last MIG change: see its log before acting";
    } else if (state == "pending" || state == "rebooting") {
      c.outcome = CheckOutcome::kWarn;
      c.hint = "a MIG change is in progress; wait until mig-manager reports success";
    }
    perNode.push_back(std::move(c));
  }
  if (perNode.empty()) {
    out.push_back({"gpu-nodes", CheckOutcome::kFail,
                   fmt::format("none of {} Nodes has {} or {}=true", nodes->items.size(),
                               kGpuProductLabel, kGpuPresentLabel),
                   "GPU feature discovery (a GPU Operator operand) labels GPU nodes"});
    return;
  }
  out.push_back({"gpu-nodes", CheckOutcome::kOk,
                 fmt::format("{} GPU node(s) of {}", perNode.size(), nodes->items.size()), ""});
  std::move(perNode.begin(), perNode.end(), std::back_inserter(out));
  if (o.policies != nullptr) checkPolicyScope(*o.policies, gpuNodes, out);
}

// Per kind HPAs scale through /scale beside Deployments and StatefulSets: served with /scale
// (warn when not: those HPAs are skipped) and readable (list, watch, get <resource>/scale; fail
// when not).
void checkScaleTargets(kube::KubeClient& client, std::vector<PreflightCheck>& out) {
  auto hpas = client.list(
      kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers"), {});
  if (!hpas) return;
  std::map<std::string, std::pair<std::string, int>> kinds;  // "<apiVersion> <Kind>" -> an HPA
  for (const auto& h : hpas->items) {
    const std::string apiVersion = stringAt(h, {"spec", "scaleTargetRef", "apiVersion"});
    const std::string kind = stringAt(h, {"spec", "scaleTargetRef", "kind"});
    if (kind.empty() ||
        (apiVersion == "apps/v1" && (kind == "Deployment" || kind == "StatefulSet")))
      continue;
    auto& [hpa, n] = kinds[apiVersion + " " + kind];
    if (n++ == 0) {
      hpa = stringAt(h, {"metadata", "namespace"}) + "/" + stringAt(h, {"metadata", "name"});
    }
  }
  for (const auto& [key, entry] : kinds) {
    const std::string apiVersion = key.substr(0, key.find(' '));
    const std::string kind = key.substr(key.find(' ') + 1);
    const std::string check = "scale-target " + kind;
    const std::string hpas = fmt::format("{} HPA(s), e.g. {}", entry.second, entry.first);
    auto resolved = resolveScalableKind(client, apiVersion, kind);
    if (!resolved) {
      out.push_back(
          {check, CheckOutcome::kWarn,
           fmt::format("{} scale it, and are skipped: {}", hpas, resolved.status().message()),
           "install the kind's CRD (with a scale subresource), or fix the HPAs' "
           "scaleTargetRef"});
      continue;
    }
    std::vector<std::string> missing;
    for (const auto& [verb, sub] : {std::pair{"list", ""}, {"watch", ""}, {"get", "scale"}}) {
      const Permission p{verb, resolved->group, resolved->resource, sub, "", ""};
      auto ok = allowed(client, p);
      if (!ok || !*ok) missing.push_back(p.text());
    }
    if (missing.empty()) {
      out.push_back(
          {check, CheckOutcome::kOk, hpas + " scale it; watched and read through /scale", ""});
      continue;
    }
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    out.push_back({check, CheckOutcome::kFail,
                   fmt::format("{} scale it, and are skipped: missing {}", hpas, list),
                   "grant them with a ClusterRole labelled "
                   "gpuscale.io/aggregate-to-reconciler-scale-targets: \"true\" (helm: "
                   "reconciler.scaleTargets)"});
  }
}

}  // namespace

std::string_view checkOutcomeName(CheckOutcome outcome) {
  static constexpr core::EnumNames<CheckOutcome, 3> kNames{
      {{CheckOutcome::kOk, "ok"}, {CheckOutcome::kWarn, "warn"}, {CheckOutcome::kFail, "fail"}}};
  return core::enumName(kNames, outcome, "fail");
}

bool PreflightReport::passed() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const auto& c) { return c.outcome == CheckOutcome::kFail; });
}

std::string Permission::text() const {
  std::string out = verb + " " + resource;
  if (!group.empty()) out += "." + group;
  if (!subresource.empty()) out += "/" + subresource;
  if (!ns.empty()) out += " " + ns;
  if (!name.empty()) out += (ns.empty() ? " " : "/") + name;
  return out;
}

std::vector<Permission> actPermissions(const PreflightOptions& o) {
  std::vector<Permission> out;
  auto add = [&](std::vector<std::string> verbs, const char* group, const char* resource,
                 const std::string& ns = {}, const std::string& name = {},
                 const char* subresource = "") {
    for (auto& verb : verbs) out.push_back({verb, group, resource, subresource, ns, name});
  };
  // What every pass reads.
  for (const char* r : {"nodes", "pods"}) add({"list", "watch"}, "", r);
  add({"list", "watch"}, "autoscaling", "horizontalpodautoscalers");
  for (const char* r : {"deployments", "statefulsets"}) add({"list", "watch"}, "apps", r);
  add({"get"}, "apps", "deployments", {}, {}, "scale");
  add({"list", "watch"}, "", "configmaps", o.operatorNamespace);
  add({"get"}, "", "configmaps", o.ns, o.stateConfigMap);
  // What act mode writes.
  add({"patch"}, "", "nodes");
  add({"patch"}, "autoscaling", "horizontalpodautoscalers");
  add({"patch"}, "keda.sh", "scaledobjects");
  add({"patch"}, "gpuscale.io", "gpucapacityrequests", {}, {}, "status");
  for (const auto& cm : {o.migConfigMap, o.devicePluginConfigMap}) {
    add({"update", "patch"}, "", "configmaps", o.operatorNamespace, cm);
  }
  add({"create"}, "", "configmaps", o.operatorNamespace);
  add({"patch"}, "", "configmaps", o.ns, o.stateConfigMap);
  add({"create"}, "", "configmaps", o.ns);
  add({"get", "update"}, "coordination.k8s.io", "leases", o.ns, o.leaseName);
  add({"create"}, "coordination.k8s.io", "leases", o.ns);
  add({"create", "patch"}, "", "events");
  return out;
}

PreflightReport preflight(kube::KubeClient& client, const PreflightOptions& o) {
  PreflightReport report;
  auto& out = report.checks;
  out.push_back(checkApi(client));
  if (out.back().outcome == CheckOutcome::kFail) return report;
  out.push_back(checkPermissions(client, o));
  checkOptionalApis(client, out);
  out.push_back(checkOperatorNamespace(client, o));
  out.push_back(checkConfigMap(client, "stock-mig-config", o.operatorNamespace,
                               o.defaultMigConfigMap, CheckOutcome::kWarn,
                               "the GPU Operator's stock MIG configs are not carried over into the "
                               "reconciler's; give its name with --default-mig-config-map"));
  out.push_back(checkConfigMap(client, "mig-config", o.operatorNamespace, o.migConfigMap,
                               CheckOutcome::kWarn,
                               "the reconciler creates it on its first MIG change, with the stock "
                               "configs; create it now, before the ClusterPolicy names it, with "
                               "gpuscale-reconciler configmaps init"));
  out.push_back(checkConfigMap(client, "device-plugin-config", o.operatorNamespace,
                               o.devicePluginConfigMap, CheckOutcome::kWarn,
                               "the reconciler creates it on its first time-slicing change; "
                               "create it now with gpuscale-reconciler configmaps init"));
  checkClusterPolicies(client, o, out);
  checkOperatorWorkloads(client, o, out);
  checkNodes(client, o, out);
  checkScaleTargets(client, out);
  return report;
}

std::string preflightText(const PreflightReport& report) {
  std::string text;
  for (const auto& c : report.checks) {
    text += fmt::format("{:<5}{}: {}\n", checkOutcomeName(c.outcome), c.name, c.detail);
    if (!c.hint.empty()) text += "       hint: " + c.hint + "\n";
  }
  text += report.passed() ? "preflight passed: nothing fails act mode\n"
                          : "preflight failed: fix what fails before --mode=act\n";
  return text;
}

std::string preflightJson(const PreflightReport& report) {
  json checks = json::array();
  for (const auto& c : report.checks) {
    checks.push_back({{"name", c.name},
                      {"result", checkOutcomeName(c.outcome)},
                      {"detail", c.detail},
                      {"hint", c.hint}});
  }
  return json{{"passed", report.passed()}, {"checks", checks}}.dump(2) + "\n";
}

}  // namespace gpuscale::reconciler
