#include "gpuscale/reconciler/gpu_pod_mapping.h"

#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/planner.h"

namespace gpuscale::reconciler {
namespace gpu_pod_mapping_test {

namespace pt = partition::testing;
using nlohmann::json;

const auto kNow = *core::parseRfc3339("2026-11-22T01:00:00Z");

using FixedMapping = testing::FixedGpuPodMapping;

// Node "n" (two A100s, both 2x 3g.20gb) runs two pods of "big"; "small" waits for three 1g.5gb
// slices no GPU has.
json cluster(const std::string& strategy) {
  std::vector<json> items{pt::defaultMigConfigMap(),
                          pt::migNode("n", "NVIDIA-A100-SXM4-40GB", 2, "all-3g.20gb",
                                      {{"3g.20gb", 4}}, {}, "", strategy),
                          pt::deployment("default", "big", 2, "nvidia.com/mig-3g.20gb"),
                          pt::deployment("default", "small", 3, "nvidia.com/mig-1g.5gb")};
  for (int i = 0; i < 2; ++i)
    items.push_back(pt::gpuPod("default", "big", i, "nvidia.com/mig-3g.20gb", "n"));
  for (int i = 0; i < 3; ++i)
    items.push_back(pt::gpuPod("default", "small", i, "nvidia.com/mig-1g.5gb", ""));
  items.push_back(pt::hpa("default", "big", pt::hpaSpec(1, 2, 2, 2, "10", "50", false)));
  items.push_back(pt::hpa("default", "small", pt::hpaSpec(1, 3, 3, 3, "100", "50", true)));
  return pt::list(items);
}

// The GPUs the plan rebuilds on node "n".
std::vector<int> reshapedGpus(const std::string& strategy, GpuPodMapping& mapping) {
  auto snapshot = pt::snapshotOf(cluster(strategy));
  applyGpuMapping(snapshot, mapping, kNow);
  auto policies = partition::defaultPolicies();
  auto workloads = partition::assessWorkloads(snapshot, policies);
  auto plan = partition::planPartitions(snapshot, workloads, kNow);
  std::vector<int> gpus;
  const auto planned = partition::planToJson(plan);
  for (const auto& a : planned["actions"]) {
    if (a["kind"] != "MigReconfigure") continue;
    EXPECT_EQ(a["node"], "n");
    for (const auto& g : a["gpus"]) gpus.push_back(g["index"].get<int>());
  }
  return gpus;
}

TEST(GpuPodMappingTest, PlannerReshapesOnlyGpusTheMappingReportsIdle) {
  struct Row {
    const char* what;
    std::string strategy;
    std::optional<GpuOccupancy> answer;
    std::vector<int> want;
  };
  const std::vector<Row> rows{
      {"unknown mapping: the node-level rule, nothing reshaped", "mixed", std::nullopt, {}},
      {"pods on GPU 0, GPU 1 idle: only GPU 1 is rebuilt", "mixed", GpuOccupancy{{0, 1}, {0}}, {1}},
      {"pods on GPU 1, GPU 0 idle: only GPU 0 is rebuilt", "mixed", GpuOccupancy{{0, 1}, {1}}, {0}},
      {"GPU 1 not reported: unknown is busy", "mixed", GpuOccupancy{{0}, {0}}, {}},
      {"both GPUs hold pods", "mixed", GpuOccupancy{{0, 1}, {0, 1}}, {}},
      {"single strategy rebuilds the whole node: never with pods on it",
       "single",
       GpuOccupancy{{0, 1}, {0}},
       {}},
      {"GPU 1 looks idle but a pod that just started is not in the metrics yet: wait",
       "mixed",
       GpuOccupancy{{0, 1}, {0}, {"default/big-1"}},
       {}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    FixedMapping mapping(row.answer);
    EXPECT_EQ(reshapedGpus(row.strategy, mapping), row.want);
  }
}

TEST(GpuPodMappingTest, AsksOnlyAboutMixedNodesWithGpuPodsAndPassesTheirPods) {
  FixedMapping mixed(GpuOccupancy{{0, 1}, {0}});
  auto snapshot = pt::snapshotOf(cluster("mixed"));
  EXPECT_EQ(applyGpuMapping(snapshot, mixed, kNow), 1);
  EXPECT_EQ(
      mixed.asked,
      (std::map<std::string, std::set<std::string>>{{"n", {"default/big-0", "default/big-1"}}}));
  ASSERT_EQ(snapshot.nodes[0].gpus.size(), 2u);
  EXPECT_TRUE(snapshot.nodes[0].gpus[0].busy);
  EXPECT_FALSE(snapshot.nodes[0].gpus[1].busy);
  EXPECT_FALSE(snapshot.nodes[0].gpuMappingSettling);

  FixedMapping single(GpuOccupancy{{0, 1}, {0}});
  auto other = pt::snapshotOf(cluster("single"));
  EXPECT_EQ(applyGpuMapping(other, single, kNow), 0);
  EXPECT_TRUE(single.asked.empty());

  FixedMapping settling(
      GpuOccupancy{{0, 1}, {0}, {"default/big-1"}, {{"nvidia.com/mig-3g.20gb", 0.9}}});
  auto settled = pt::snapshotOf(cluster("mixed"));
  EXPECT_EQ(applyGpuMapping(settled, settling, kNow), 0) << "an incomplete answer";
  EXPECT_TRUE(settled.nodes[0].gpuMappingSettling);
  EXPECT_TRUE(settled.nodes[0].gpus[0].busy && settled.nodes[0].gpus[1].busy);
  EXPECT_EQ(settled.nodes[0].utilization.at("nvidia.com/mig-3g.20gb"), 0.9)
      << "utilisation is kept whatever the pods";

  NodeLevelGpuPodMapping nodeLevel;
  auto third = pt::snapshotOf(cluster("mixed"));
  EXPECT_EQ(applyGpuMapping(third, nodeLevel, kNow), 0);
  EXPECT_TRUE(third.nodes[0].gpus[0].busy && third.nodes[0].gpus[1].busy);
}

}  // namespace gpu_pod_mapping_test
}  // namespace gpuscale::reconciler
