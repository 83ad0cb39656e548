// The reconciler's pass over the fleet of bench/scale/fleet.sh, without a cluster: the objects
// bench/scale/fleet_objects.py writes (1,000 KWOK GPU nodes: 40% A100-40GB and 30% H100-80GB cut
// into 1g MIG slices, 30% T4 with 8 whole GPUs; one Deployment and one HPA per node, 20,000 pods;
// 100 HPAs held at their ceiling with 8 pods Pending "Insufficient") read once into records, as
// the reconciler's caches hold them, then per iteration what a pass computes from them: the
// snapshot, demand detection and the plan.
//
// Unlike planner_bench's pools, most of these workloads' pods are bound by nodeName with no
// nodeSelector, so every node is eligible for every one of them: the pass's cost grows with HPAs
// x nodes, which is what the fleet measures.
#include <benchmark/benchmark.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/object_record.h"
#include "gpuscale/partition/planner.h"
#include "gpuscale/partition/pod_record.h"
#include "gpuscale/partition/snapshot.h"
#include "unit/partition/pod_placement.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

struct Product {
  const char* label;
  int memoryMiB;
  const char* profile;  // "" for whole GPUs
  int devices;
};
const Product kA100{"NVIDIA-A100-SXM4-40GB", 40960, "1g.5gb", 56};
const Product kH100{"NVIDIA-H100-80GB-HBM3", 81559, "1g.10gb", 56};
const Product kT4{"Tesla-T4", 15360, "", 8};

// The sizes fleet.sh runs by default (FLEET_NODES, FLEET_PODS, FLEET_HELD).
constexpr int kNodes = 1000;
constexpr int kPods = 20000;
constexpr int kHeld = 100;
constexpr int kHeldReplicas = 26;  // of 3 slices each: 18 fit an A100's 56 slices
constexpr int kNamespaces = 10;

// 40% A100, 30% H100, 30% T4, interleaved (fleet_objects.py kind_of).
const Product& productOf(int i) {
  const int r = i % 10;
  return r < 4 ? kA100 : r < 7 ? kH100 : kT4;
}

std::string resourceOf(const Product& p) {
  return *p.profile ? std::string("nvidia.com/mig-") + p.profile : "nvidia.com/gpu";
}

json node(const std::string& name, const Product& p) {
  json labels{{"kubernetes.io/hostname", name},
              {"nvidia.com/gpu.present", "true"},
              {"nvidia.com/gpu.product", p.label},
              {"nvidia.com/gpu.count", "8"},
              {"nvidia.com/gpu.memory", std::to_string(p.memoryMiB)}};
  if (*p.profile) {
    labels["nvidia.com/mig.capable"] = "true";
    labels["nvidia.com/mig.strategy"] = "mixed";
    labels["nvidia.com/mig.config"] = std::string("all-") + p.profile;
    labels["nvidia.com/mig.config.state"] = "success";
    labels[std::string("nvidia.com/mig-") + p.profile + ".count"] = std::to_string(p.devices);
  } else {
    labels["nvidia.com/mig.capable"] = "false";
  }
  json resources{{"cpu", "256"}, {"pods", "110"}, {resourceOf(p), std::to_string(p.devices)}};
  return {{"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"status", {{"capacity", resources}, {"allocatable", resources}}}};
}

json podSpec(const std::string& resource, int perPod, const std::string& hostname) {
  json spec{{"containers", json::array({{{"name", "server"},
                                         {"resources",
                                          {{"requests", {{resource, std::to_string(perPod)}}},
                                           {"limits", {{resource, std::to_string(perPod)}}}}}}})}};
  if (!hostname.empty()) spec["nodeSelector"] = {{"kubernetes.io/hostname", hostname}};
  return spec;
}

struct Workload {
  std::string ns, name, node, resource;
  int replicas, perPod, max;
  bool held;
};

// fleet_objects.py layout(), without fleet-react (a single workload, planned like the held ones).
std::vector<Workload> layout() {
  int t4 = 0;
  for (int i = 0; i < kNodes; ++i) t4 += productOf(i).devices == 8;
  const int mig = kNodes - t4 - kHeld;
  const int perT4 = kPods * 3 / 10 / kNodes;
  const int left = kPods - t4 * perT4 - kHeld * kHeldReplicas;
  std::vector<Workload> out;
  int migSeen = 0, heldLeft = kHeld;
  for (int i = 0; i < kNodes; ++i) {
    const Product& p = productOf(i);
    const bool held = &p == &kA100 && heldLeft > 0;
    heldLeft -= held;
    int replicas = perT4;
    if (held) {
      replicas = kHeldReplicas;
    } else if (&p != &kT4) {
      replicas = left / mig + (migSeen++ < left % mig ? 1 : 0);
    }
    const std::string index = std::to_string(10000 + i).substr(1);
    out.push_back({"fleet-" + std::to_string(i % kNamespaces), "w" + index, "fleet-" + index,
                   resourceOf(p), replicas, held ? 3 : 1, held ? replicas : replicas * 3 / 2 + 1,
                   held});
  }
  return out;
}

json hpa(const Workload& w) {
  json metric{{"name", "requests_per_second"}};
  const int load = w.held ? 20 : 10;  // twice the target when held
  auto condition = [](const char* type, bool on, const char* reason) {
    return json{{"type", type}, {"status", on ? "True" : "False"}, {"reason", reason}};
  };
  return {
      {"kind", "HorizontalPodAutoscaler"},
      {"metadata",
       {{"name", w.name},
        {"namespace", w.ns},
        {"annotations", {{"gpuscale.io/partition-policy", "default"}}}}},
      {"spec",
       {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", w.name}}},
        {"minReplicas", 1},
        {"maxReplicas", w.max},
        {"metrics",
         json::array({{{"type", "Pods"},
                       {"pods",
                        {{"metric", metric},
                         {"target", {{"type", "AverageValue"}, {"averageValue", "10"}}}}}}})}}},
      {"status",
       {{"currentReplicas", w.replicas},
        {"desiredReplicas", w.replicas},
        {"currentMetrics",
         json::array(
             {{{"type", "Pods"},
               {"pods",
                {{"metric", metric}, {"current", {{"averageValue", std::to_string(load)}}}}}}})},
        {"conditions",
         json::array({condition("AbleToScale", true, "ReadyForNewScale"),
                      condition("ScalingActive", true, "ValidMetricFound"),
                      w.held ? condition("ScalingLimited", true, "TooManyReplicas")
                             : condition("ScalingLimited", false, "DesiredWithinRange")})}}}};
}

json deployment(const Workload& w) {
  json spec = podSpec(w.resource, w.perPod, w.held ? w.node : "");
  if (!w.held) spec["nodeName"] = w.node;
  json tmpl{{"metadata", {{"labels", {{"app", w.name}}}}}, {"spec", spec}};
  json depSpec{{"replicas", w.replicas},
               {"selector", {{"matchLabels", {{"app", w.name}}}}},
               {"template", tmpl}};
  return {{"kind", "Deployment"},
          {"metadata", {{"name", w.name}, {"namespace", w.ns}}},
          {"spec", depSpec}};
}

json pod(const Workload& w, int i, bool running) {
  json p{{"kind", "Pod"},
         {"metadata",
          {{"name", w.name + "-" + std::to_string(i)},
           {"namespace", w.ns},
           {"labels", {{"app", w.name}, {"pod-template-hash", "5d8f7c9b6"}}}}},
         {"spec", podSpec(w.resource, w.perPod, w.held ? w.node : "")}};
  testing::placePod(p, running ? w.node : "",
                    "0/1001 nodes are available: 1 Insufficient " + w.resource);
  return p;
}

std::string migConfig() {
  std::ifstream in(GPUSCALE_FLEET_MIG_CONFIG);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fleet as the reconciler's caches hold it: Pods and the other kinds as records, the
// ConfigMap as JSON.
struct Fleet {
  json configMap;
  std::vector<KubeItem> items;
};

const Fleet& fleet() {
  static const Fleet f = [] {
    Fleet out;
    out.configMap = {
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "default-mig-parted-config"}, {"namespace", "gpu-operator"}}},
        {"data", {{"config.yaml", migConfig()}}}};
    out.items.push_back({"ConfigMap", &out.configMap});
    auto record = [&](std::string_view kind, const json& object) {
      out.items.push_back(
          {kind, nullptr, nullptr, std::make_shared<ObjectRecord>(readObjectRecord(kind, object))});
    };
    // Pods as the reconciler's pod cache gives them: by "namespace/name".
    std::map<std::string, std::shared_ptr<const PodRecord>> pods;
    for (const Workload& w : layout()) {
      const Product& p = productOf(std::stoi(w.node.substr(6)));
      record("Node", node(w.node, p));
      record("HorizontalPodAutoscaler", hpa(w));
      record("Deployment", deployment(w));
      const int fit = p.devices / w.perPod;
      for (int i = 0; i < w.replicas; ++i) {
        pods[w.ns + "/" + w.name + "-" + std::to_string(i)] =
            std::make_shared<PodRecord>(readPodRecord(pod(w, i, i < fit)));
      }
    }
    for (auto& [key, record] : pods) out.items.push_back({"Pod", nullptr, std::move(record)});
    return out;
  }();
  return f;
}

void BM_FleetSnapshot(benchmark::State& state) {
  fleet();  // read once, outside the measured loop
  std::size_t pods = 0;
  for (auto _ : state) {
    auto s = buildSnapshot(fleet().items);
    pods = s->pods.size();
    benchmark::DoNotOptimize(s);
  }
  state.counters["pods"] = static_cast<double>(pods);
}
BENCHMARK(BM_FleetSnapshot)->Unit(benchmark::kMillisecond);

// What a steady-state pass computes: the snapshot from the cached records, demand detection for
// the 1,000 HPAs and the plan.
void BM_FleetPass(benchmark::State& state) {
  const PolicySet policies = defaultPolicies();
  fleet();
  std::size_t workloads = 0, blocked = 0, actions = 0;
  for (auto _ : state) {
    const auto now = std::chrono::system_clock::now();
    auto snapshot = buildSnapshot(fleet().items);
    auto assessed = assessWorkloads(*snapshot, policies, now);
    Plan plan = planPartitions(*snapshot, assessed, now);
    workloads = assessed.size();
    blocked = plan.demands.size();
    actions = plan.actions.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["workloads"] = static_cast<double>(workloads);
  state.counters["blocked"] = static_cast<double>(blocked);
  state.counters["actions"] = static_cast<double>(actions);
}
BENCHMARK(BM_FleetPass)->Unit(benchmark::kMillisecond);

// The planner's part of the pass: demand detection and the plan over a snapshot built once.
void BM_FleetAssessAndPlan(benchmark::State& state) {
  const PolicySet policies = defaultPolicies();
  const auto snapshot = buildSnapshot(fleet().items);
  for (auto _ : state) {
    const auto now = std::chrono::system_clock::now();
    auto assessed = assessWorkloads(*snapshot, policies, now);
    Plan plan = planPartitions(*snapshot, assessed, now);
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_FleetAssessAndPlan)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuscale::partition

BENCHMARK_MAIN();
