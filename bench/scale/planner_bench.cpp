// Planner at cluster scale: 1,000 nodes x 8 A100-40GB GPUs, 200 managed HPAs, every HPA blocked.
//
// Each HPA owns a pool of 5 nodes (its pods' nodeSelector): 3 busy nodes full of its pods at the
// geometry of its profile and 2 idle nodes at other geometries, plus one unschedulable pod, so the
// planner must reshape idle GPUs and raise time-slicing for every HPA. Target: a plan
// in <= 100 ms.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/planner.h"
#include "gpuscale/partition/snapshot.h"
#include "unit/partition/pod_placement.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

constexpr int kHpas = 200;
constexpr int kNodesPerPool = 5;
constexpr int kBusyNodesPerPool = 3;
constexpr int kGpusPerNode = 8;

struct Shape {
  const char* config;
  std::map<std::string, int> perGpu;
};

const Shape kShapes[] = {
    {"all-1g.5gb", {{"1g.5gb", 7}}},
    {"all-2g.10gb", {{"2g.10gb", 3}}},
    {"all-3g.20gb", {{"3g.20gb", 2}}},
    {"all-balanced", {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}},
};

constexpr const char* kMigConfig = R"(version: v1
mig-configs:
  all-1g.5gb: [{devices: all, mig-enabled: true, mig-devices: {"1g.5gb": 7}}]
  all-2g.10gb: [{devices: all, mig-enabled: true, mig-devices: {"2g.10gb": 3}}]
  all-3g.20gb: [{devices: all, mig-enabled: true, mig-devices: {"3g.20gb": 2}}]
  all-balanced: [{devices: all, mig-enabled: true, mig-devices: {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}}]
)";

json node(const std::string& name, const std::string& pool, const Shape& shape) {
  json labels{{"pool", pool},
              {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
              {"nvidia.com/gpu.count", std::to_string(kGpusPerNode)},
              {"nvidia.com/mig.strategy", "mixed"},
              {"nvidia.com/mig.config", shape.config},
              {"nvidia.com/mig.config.state", "success"}};
  json allocatable = json::object();
  for (const auto& [profile, n] : shape.perGpu) {
    allocatable["nvidia.com/mig-" + profile] = std::to_string(n * kGpusPerNode);
  }
  return {{"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"status", {{"allocatable", allocatable}}}};
}

json podSpec(const std::string& resource, const std::string& pool) {
  return {{"nodeSelector", {{"pool", pool}}},
          {"containers",
           json::array({{{"name", "triton"},
                         {"resources",
                          {{"limits", {{resource, "1"}}}, {"requests", {{resource, "1"}}}}}}})}};
}

json pod(const std::string& app, int i, const std::string& resource, const std::string& pool,
         const std::string& nodeName) {
  json p{{"kind", "Pod"},
         {"metadata",
          {{"name", app + "-" + std::to_string(i)},
           {"namespace", "bench"},
           {"labels", {{"app", app}}}}},
         {"spec", podSpec(resource, pool)}};
  testing::placePod(p, nodeName, "0/1000 nodes are available: 5 Insufficient " + resource);
  return p;
}

json clusterDump() {
  json items = json::array();
  items.push_back(
      {{"kind", "ConfigMap"},
       {"metadata", {{"name", "default-mig-parted-config"}, {"namespace", "gpu-operator"}}},
       {"data", {{"config.yaml", kMigConfig}}}});
  for (int h = 0; h < kHpas; ++h) {
    const std::string app = "app-" + std::to_string(h);
    const std::string pool = "pool-" + std::to_string(h);
    const Shape& own = kShapes[h % 3];
    const std::string profile = own.perGpu.begin()->first;
    const std::string resource = "nvidia.com/mig-" + profile;
    int pods = 0;
    for (int n = 0; n < kNodesPerPool; ++n) {
      const std::string name = "node-" + std::to_string(h * kNodesPerPool + n);
      const bool busy = n < kBusyNodesPerPool;
      items.push_back(
          node(name, pool, busy ? own : kShapes[(h + n) % 4 == h % 3 ? 3 : (h + n) % 4]));
      if (!busy) continue;
      for (int i = 0; i < own.perGpu.begin()->second * kGpusPerNode; ++i) {
        items.push_back(pod(app, pods++, resource, pool, name));
      }
    }
    items.push_back(pod(app, pods, resource, pool, ""));
    items.push_back(
        {{"kind", "Deployment"},
         {"metadata", {{"name", app}, {"namespace", "bench"}}},
         {"spec",
          {{"replicas", pods + 1},
           {"selector", {{"matchLabels", {{"app", app}}}}},
           {"template",
            {{"metadata", {{"labels", {{"app", app}}}}}, {"spec", podSpec(resource, pool)}}}}}});
    json metric{{"metric", {{"name", "avg_time_queue_us"}}}};
    json target = metric, current = metric;
    target["target"] = {{"type", "AverageValue"}, {"averageValue", "50"}};
    current["current"] = {{"averageValue", "150"}};
    items.push_back({{"kind", "HorizontalPodAutoscaler"},
                     {"metadata",
                      {{"name", app},
                       {"namespace", "bench"},
                       {"annotations", {{"gpuscale.io/partition-policy", "default"}}}}},
                     {"spec",
                      {{"scaleTargetRef", {{"kind", "Deployment"}, {"name", app}}},
                       {"minReplicas", 1},
                       {"maxReplicas", pods + 1},
                       {"metrics", json::array({{{"type", "Pods"}, {"pods", target}}})}}},
                     {"status",
                      {{"currentReplicas", pods + 1},
                       {"desiredReplicas", pods + 1},
                       {"currentMetrics", json::array({{{"type", "Pods"}, {"pods", current}}})},
                       {"conditions", json::array({{{"type", "ScalingLimited"},
                                                    {"status", "True"},
                                                    {"reason", "TooManyReplicas"}}})}}}});
  }
  return {{"kind", "List"}, {"items", std::move(items)}};
}

const json& dump() {
  static const json d = clusterDump();
  return d;
}

const ClusterSnapshot& snapshot() {
  static const ClusterSnapshot s = *buildSnapshot(dump());
  return s;
}

void BM_BuildSnapshot(benchmark::State& state) {
  for (auto _ : state) {
    auto s = buildSnapshot(dump());
    benchmark::DoNotOptimize(s);
  }
  state.counters["nodes"] = static_cast<double>(snapshot().nodes.size());
  state.counters["pods"] = static_cast<double>(snapshot().pods.size());
}
BENCHMARK(BM_BuildSnapshot)->Unit(benchmark::kMillisecond);

// The reconciler's per-loop cost once informers hold the objects: demand detection plus planning.
void BM_AssessAndPlan(benchmark::State& state) {
  const PolicySet policies = defaultPolicies();
  std::size_t actions = 0, blocked = 0;
  for (auto _ : state) {
    const auto now = std::chrono::system_clock::now();
    auto workloads = assessWorkloads(snapshot(), policies, now);
    Plan plan = planPartitions(snapshot(), workloads, now);
    actions = plan.actions.size();
    blocked = plan.demands.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["gpus"] = static_cast<double>(snapshot().nodes.size() * kGpusPerNode);
  state.counters["blocked_hpas"] = static_cast<double>(blocked);
  state.counters["actions"] = static_cast<double>(actions);
}
BENCHMARK(BM_AssessAndPlan)->Unit(benchmark::kMillisecond);

void BM_PlanOnly(benchmark::State& state) {
  const PolicySet policies = defaultPolicies();
  auto workloads = assessWorkloads(snapshot(), policies, std::chrono::system_clock::now());
  for (auto _ : state) {
    Plan plan = planPartitions(snapshot(), workloads, std::chrono::system_clock::now());
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_PlanOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuscale::partition

BENCHMARK_MAIN();
