// Builders for the Kubernetes objects partition tests feed to buildSnapshot(), shaped like `kubectl
// get -o json` output but with only the fields the snapshot reads, plus readers for the committed
// seed dumps.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "pod_placement.h"

namespace gpuscale::partition::testing {

using nlohmann::json;

// The fixed clock, MIG resources and GPU product that the planner's table tests share.
inline const TimePoint kNow = *core::parseRfc3339("2026-11-22T01:00:00Z");
inline const std::string k1g = "nvidia.com/mig-1g.5gb";
inline const std::string k3g = "nvidia.com/mig-3g.20gb";
inline const std::string kA100 = "NVIDIA-A100-SXM4-40GB";

inline std::string readDataFile(const std::string& name) {
  const char* root = std::getenv("GPUSCALE_SOURCE_DIR");
  std::ifstream in(std::string(root ? root : ".") + "/tests/data/partition/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline json loadDump(const std::string& name) { return json::parse(readDataFile(name)); }

inline json list(std::vector<json> items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

inline json gpuNode(const std::string& name, std::map<std::string, std::string> labels,
                    std::map<std::string, std::string> allocatable) {
  labels["kubernetes.io/hostname"] = name;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"status", {{"allocatable", allocatable}}}};
}

// A mixed-strategy MIG node; `counts` are node-wide instance counts per profile.
inline json migNode(const std::string& name, const std::string& product, int gpus,
                    const std::string& migConfig, const std::map<std::string, int>& counts,
                    const std::map<std::string, int>& replicas = {},
                    const std::string& pluginConfig = "", const std::string& strategy = "mixed") {
  std::map<std::string, std::string> labels{
      {"nvidia.com/gpu.product", product},  {"nvidia.com/gpu.count", std::to_string(gpus)},
      {"nvidia.com/mig.capable", "true"},   {"nvidia.com/mig.strategy", strategy},
      {"nvidia.com/mig.config", migConfig}, {"nvidia.com/mig.config.state", "success"}};
  if (!pluginConfig.empty()) labels["nvidia.com/device-plugin.config"] = pluginConfig;
  std::map<std::string, std::string> allocatable;
  for (const auto& [profile, count] : counts) {
    auto it = replicas.find(profile);
    int r = it == replicas.end() ? 1 : it->second;
    labels["nvidia.com/mig-" + profile + ".count"] = std::to_string(count);
    if (strategy == "mixed") allocatable["nvidia.com/mig-" + profile] = std::to_string(count * r);
  }
  return gpuNode(name, labels, allocatable);
}

inline json container(const std::string& resource, int count) {
  return {{"name", "triton"},
          {"resources",
           {{"limits", {{resource, std::to_string(count)}}},
            {"requests", {{"cpu", "1"}, {resource, std::to_string(count)}}}}}};
}

// A pod of `app`: Running and Ready on `node`, or Pending Unschedulable for lack of `resource` when
// `node` is empty.
inline json gpuPod(const std::string& ns, const std::string& app, int index,
                   const std::string& resource, const std::string& node) {
  json pod{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata",
            {{"name", app + "-" + std::to_string(index)},
             {"namespace", ns},
             {"labels", {{"app", app}}}}},
           {"spec", {{"containers", json::array({container(resource, 1)})}}}};
  placePod(pod, node,
           "0/1 nodes are available: 1 Insufficient " + resource + ". preemption: 0/1 nodes");
  return pod;
}

inline json deployment(const std::string& ns, const std::string& name, int replicas,
                       const std::string& resource) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", json::array({container(resource, 1)})}}}}}}}};
}

struct HpaSpec {
  int min = 1, max = 1, current = 1, desired = 1;
  std::string average = "100", target = "50";
  bool limited = false;
  std::string policy = "default";
  std::map<std::string, std::string> annotations;
  std::string lastScaleTime = "2026-11-22T00:00:00Z";
};

inline HpaSpec hpaSpec(int min, int max, int current, int desired, std::string average,
                       std::string target, bool limited) {
  HpaSpec s;
  s.min = min;
  s.max = max;
  s.current = current;
  s.desired = desired;
  s.average = std::move(average);
  s.target = std::move(target);
  s.limited = limited;
  return s;
}

inline json hpa(const std::string& ns, const std::string& name, const HpaSpec& s) {
  auto annotations = s.annotations;
  if (!s.policy.empty()) annotations["gpuscale.io/partition-policy"] = s.policy;
  json conditions = json::array(
      {{{"type", "ScalingActive"}, {"status", "True"}, {"reason", "ValidMetricFound"}}});
  conditions.push_back({{"type", "ScalingLimited"},
                        {"status", s.limited ? "True" : "False"},
                        {"reason", s.limited ? "TooManyReplicas" : "DesiredWithinRange"}});
  json metric = {{"metric", {{"name", "avg_time_queue_us"}}}};
  json spec = metric, current = metric;
  spec["target"] = {{"type", "AverageValue"}, {"averageValue", s.target}};
  current["current"] = {{"averageValue", s.average}};
  return {{"apiVersion", "autoscaling/v2"},
          {"kind", "HorizontalPodAutoscaler"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"annotations", annotations}}},
          {"spec",
           {{"scaleTargetRef", {{"kind", "Deployment"}, {"name", name}}},
            {"minReplicas", s.min},
            {"maxReplicas", s.max},
            {"metrics", json::array({{{"type", "Pods"}, {"pods", spec}}})}}},
          {"status",
           {{"currentReplicas", s.current},
            {"desiredReplicas", s.desired},
            {"lastScaleTime", s.lastScaleTime},
            {"currentMetrics", json::array({{{"type", "Pods"}, {"pods", current}}})},
            {"conditions", conditions}}}};
}

inline json configMap(const std::string& ns, const std::string& name,
                      std::map<std::string, std::string> data) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"data", data}};
}

// The GPU Operator's default mig-parted ConfigMap, with the reference file as its config.yaml.
inline json defaultMigConfigMap() {
  return configMap("gpu-operator", "default-mig-parted-config",
                   {{"config.yaml", readDataFile("mig-parted-default-config.yaml")}});
}

inline ClusterSnapshot snapshotOf(const json& dump) {
  auto snap = buildSnapshot(dump);
  EXPECT_TRUE(snap.ok()) << snap.status().toString();
  return snap.ok() ? std::move(*snap) : ClusterSnapshot{};
}

// The one policy a single-policy file defines. A file that does not parse, or defines another
// number of policies, fails the test; the result is then a default Policy.
inline Policy onePolicy(std::string_view yaml) {
  auto set = parsePolicies(yaml);
  EXPECT_TRUE(set.ok()) << set.status().toString();
  if (!set.ok() || set->policies.size() != 1) {
    ADD_FAILURE() << "not one policy: " << yaml;
    return {};
  }
  return set->policies.front();
}

// A cluster of `extra` objects plus the GPU Operator's default mig-parted ConfigMap.
inline json migCluster(std::vector<json> extra) {
  std::vector<json> items{defaultMigConfigMap()};
  for (auto& e : extra) items.push_back(std::move(e));
  return list(items);
}

// A blocked HPA `app` with `running` pods on `node` and `pending` unschedulable ones.
inline std::vector<json> blockedApp(const std::string& app, const std::string& resource,
                                    const std::string& node, int running, int pending,
                                    const std::string& policy = "default") {
  std::vector<json> items{deployment("default", app, running + pending, resource)};
  for (int i = 0; i < running; ++i) items.push_back(gpuPod("default", app, i, resource, node));
  for (int i = 0; i < pending; ++i)
    items.push_back(gpuPod("default", app, running + i, resource, ""));
  auto spec =
      hpaSpec(1, running + pending, running + pending, running + pending, "100", "50", true);
  spec.policy = policy;
  items.push_back(hpa("default", app, spec));
  return items;
}

inline void append(std::vector<json>& to, std::vector<json> from) {
  for (auto& j : from) to.push_back(std::move(j));
}

// The plan's maxReplicas changes: {HPA name: new maxReplicas}.
inline json maxChangesOf(const Plan& plan) {
  json out = json::object();
  for (const auto& a : plan.actions) {
    if (const auto* m = std::get_if<SetMaxReplicas>(&a)) out[m->name] = m->to;
  }
  return out;
}

// The planner's reasons for an HPA as "Code" (HPA-wide) or "node/Code".
inline std::vector<std::string> whyCodes(const HpaWhy& why) {
  std::vector<std::string> out;
  for (const auto& r : why.reasons) {
    out.push_back((r.node.empty() ? "" : r.node + "/") + std::string(whyCodeName(r.code)));
  }
  return out;
}

}  // namespace gpuscale::partition::testing
