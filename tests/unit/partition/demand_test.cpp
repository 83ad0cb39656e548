#include "gpuscale/partition/demand.h"

#include <gtest/gtest.h>

#include "kube_objects.h"

namespace gpuscale::partition {
namespace demand_test {

using testing::json;

HpaMetric metric(std::string type, std::string targetType, double target,
                 std::optional<double> current) {
  return HpaMetric{std::move(type), "m", std::move(targetType), target, current};
}

struct WantedCase {
  const char* what;
  int currentReplicas;
  int ready;
  std::vector<HpaMetric> metrics;
  double tolerance;
  int wanted;
};

TEST(DemandTest, WantedReplicasFollowTheHpaFormula) {
  const WantedCase cases[] = {
      {"seed: 399.3 vs 50 on 7 ready pods",
       7,
       7,
       {metric("Pods", "AverageValue", 50, 399.3)},
       0.1,
       56},
      {"within tolerance keeps current", 7, 7, {metric("Pods", "AverageValue", 50, 54)}, 0.1, 7},
      {"just outside tolerance scales", 7, 7, {metric("Pods", "AverageValue", 50, 56)}, 0.1, 8},
      {"tighter tolerance scales", 7, 7, {metric("Pods", "AverageValue", 50, 54)}, 0.05, 8},
      {"uses ready pods, not current", 4, 1, {metric("Pods", "AverageValue", 50, 1000)}, 0.1, 20},
      {"pods ready since the last sync do not multiply its average (HPA at 2, now 6 ready)",
       2,
       6,
       {metric("Pods", "AverageValue", 250, 740)},
       0.1,
       6},
      {"no ready count falls back to current",
       4,
       0,
       {metric("Pods", "AverageValue", 50, 100)},
       0.1,
       8},
      {"utilization", 3, 3, {metric("Resource", "Utilization", 60, 90)}, 0.1, 5},
      {"scale down", 10, 10, {metric("Pods", "AverageValue", 50, 10)}, 0.1, 2},
      {"external average value scales current",
       4,
       2,
       {metric("External", "AverageValue", 10, 30)},
       0.1,
       12},
      {"largest proposal wins",
       5,
       5,
       {metric("Pods", "AverageValue", 50, 60), metric("Resource", "Utilization", 50, 100)},
       0.1,
       10},
      {"metric without current value is skipped",
       3,
       3,
       {metric("Pods", "AverageValue", 50, std::nullopt)},
       0.1,
       3},
      {"a ratio beyond int32 saturates (values the API admits)",
       2147483647,
       2147483647,
       {metric("External", "Value", 1e-9, 1e300)},
       0.1,
       2147483647},
      {"a metric without a usable target proposes nothing",
       3,
       3,
       {metric("Object", "", 0, 100)},
       0.1,
       3},
  };
  for (const auto& c : cases) {
    HpaState hpa;
    hpa.currentReplicas = c.currentReplicas;
    hpa.metrics = c.metrics;
    EXPECT_EQ(hpaWantedReplicas(hpa, c.ready, c.tolerance), c.wanted) << c.what;
  }
}

TEST(DemandTest, SeedA100IsBlockedAtItsCeiling) {
  auto snap = testing::snapshotOf(testing::loadDump("a100_1g_stuck.json"));
  auto policies = defaultPolicies();
  auto ws = assessWorkloads(snap, policies);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_TRUE(ws[0].blocked);
  EXPECT_EQ(ws[0].reason, BlockReason::kTooManyReplicas);
  EXPECT_EQ(ws[0].resource, "nvidia.com/mig-1g.5gb");
  EXPECT_EQ(ws[0].ceiling, 7);
  EXPECT_EQ(ws[0].wanted, 56);
  EXPECT_EQ(ws[0].runningPods, 7);
}

TEST(DemandTest, PendingUnschedulablePodsBlock) {
  auto snap = testing::snapshotOf(testing::loadDump("t4_timeslicing.json"));
  auto policies = parsePolicies(testing::readDataFile("t4-policy.yaml"));
  ASSERT_TRUE(policies.ok());
  auto ws = assessWorkloads(snap, *policies);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_TRUE(ws[0].blocked);
  EXPECT_EQ(ws[0].reason, BlockReason::kUnschedulable);
  EXPECT_EQ(ws[0].ceiling, 1);
  EXPECT_EQ(ws[0].wanted, 20);
  EXPECT_EQ(ws[0].eligibleNodes.size(), 1u) << "the CPU node does not match the pod's nodeSelector";
  EXPECT_TRUE(assessWorkloads(snap, defaultPolicies()).empty())
      << "not annotated for the default policy";
}

struct BlockCase {
  const char* what;
  testing::HpaSpec spec;
  std::vector<std::pair<std::string, std::string>> conditionOverride;  // type -> "status/reason"
  bool blocked;
};

TEST(DemandTest, WhenAnHpaCountsAsBlocked) {
  const std::string res = "nvidia.com/mig-1g.5gb";
  const BlockCase cases[] = {
      {"limited at the ceiling", testing::hpaSpec(1, 7, 7, 7, "400", "50", true), {}, true},
      {"within range", testing::hpaSpec(1, 7, 7, 7, "52", "50", false), {}, false},
      {"desired at max with metrics above target, no condition",
       testing::hpaSpec(1, 7, 7, 7, "400", "50", false),
       {},
       true},
      {"rate limited is still growing",
       testing::hpaSpec(1, 7, 7, 7, "400", "50", false),
       {{"ScalingLimited", "True/ScaleUpLimit"}, {"AbleToScale", "True/ScaleUpStabilized"}},
       false},
      {"metrics missing is not a partition problem",
       testing::hpaSpec(1, 7, 7, 7, "400", "50", true),
       {{"ScalingActive", "False/FailedGetPodsMetric"}},
       false},
      {"max below the ceiling: raising max alone would do",
       testing::hpaSpec(1, 5, 5, 5, "400", "50", true),
       {},
       false},
  };
  for (const auto& c : cases) {
    std::vector<testing::json> items{
        testing::migNode("n", "NVIDIA-A100-SXM4-40GB", 1, "custom", {{"1g.5gb", 7}}),
        testing::deployment("default", "app", c.spec.current, res)};
    for (int i = 0; i < c.spec.current; ++i)
      items.push_back(testing::gpuPod("default", "app", i, res, "n"));
    auto h = testing::hpa("default", "app", c.spec);
    if (!c.conditionOverride.empty()) {
      h["status"]["conditions"] = testing::json::array();
      for (const auto& [type, sr] : c.conditionOverride) {
        h["status"]["conditions"].push_back({{"type", type},
                                             {"status", sr.substr(0, sr.find('/'))},
                                             {"reason", sr.substr(sr.find('/') + 1)}});
      }
    }
    items.push_back(h);
    auto snap = testing::snapshotOf(testing::list(items));
    auto ws = assessWorkloads(snap, defaultPolicies());
    ASSERT_EQ(ws.size(), 1u) << c.what;
    EXPECT_EQ(ws[0].blocked, c.blocked) << c.what;
  }
}

TEST(DemandTest, CeilingCountsFreePartitionsOthersDoNotUse) {
  const std::string res = "nvidia.com/mig-1g.5gb";
  auto snap = testing::snapshotOf(testing::list({
      testing::migNode("n", "NVIDIA-A100-SXM4-40GB", 1, "custom", {{"1g.5gb", 7}}),
      testing::deployment("default", "app", 2, res),
      testing::gpuPod("default", "app", 0, res, "n"),
      testing::gpuPod("default", "app", 1, res, "n"),
      testing::gpuPod("default", "other", 0, res, "n"),
      testing::gpuPod("default", "other", 1, res, "n"),
      testing::hpa("default", "app", testing::hpaSpec(1, 2, 2, 2, "100", "50", true)),
  }));
  auto ws = assessWorkloads(snap, defaultPolicies());
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].ceiling, 5) << "7 instances minus 2 used by another workload";
  EXPECT_FALSE(ws[0].blocked) << "maxReplicas 2 is below the 5 partitions it could get";
}

TEST(DemandTest, AReplicaThatIsAGroupCountsInWholeGroups) {
  // A LeaderWorkerSet of groups of 2 pods, one GPU each; 3 + 2 GPUs on two nodes hold 5 pods:
  // 2 whole groups (a group's pods may land on different nodes), not 2.5.
  const std::string res = "nvidia.com/gpu";
  auto podSpec = json{{"spec", {{"containers", json::array({testing::container(res, 1)})}}}};
  json lws{
      {"apiVersion", "leaderworkerset.x-k8s.io/v1"},
      {"kind", "LeaderWorkerSet"},
      {"metadata", {{"name", "big"}, {"namespace", "default"}, {"uid", "u"}}},
      {"spec",
       {{"replicas", 1}, {"leaderWorkerTemplate", {{"size", 2}, {"workerTemplate", podSpec}}}}}};
  json h = testing::hpa("default", "big", testing::hpaSpec(1, 2, 2, 3, "150", "50", true));
  h["spec"]["scaleTargetRef"] = {
      {"apiVersion", "leaderworkerset.x-k8s.io/v1"}, {"kind", "LeaderWorkerSet"}, {"name", "big"}};
  std::vector<json> items{testing::gpuNode("n1", {}, {{res, "3"}}),
                          testing::gpuNode("n2", {}, {{res, "2"}}), lws, h};
  for (const char* name : {"big-0", "big-0-1"}) {
    json p = testing::gpuPod("default", "big", 0, res, "n1");
    p["metadata"]["name"] = name;
    p["metadata"]["labels"] = {{"leaderworkerset.sigs.k8s.io/name", "big"}};
    items.push_back(p);
  }
  auto snap = testing::snapshotOf(testing::list(items));
  auto ws = assessWorkloads(snap, defaultPolicies());
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].ceiling, 2);
  EXPECT_EQ(ws[0].heldPods, 1) << "one whole group placed";
  EXPECT_TRUE(ws[0].blocked) << "maxReplicas 2 is at the ceiling of 2 groups";
}

}  // namespace demand_test
}  // namespace gpuscale::partition
