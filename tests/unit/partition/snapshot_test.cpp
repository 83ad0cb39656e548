#include "gpuscale/partition/snapshot.h"

#include <gtest/gtest.h>

#include <tuple>

#include "kube_objects.h"

namespace gpuscale::partition {
namespace {

using testing::json;

TEST(SnapshotTest, SeedA100NodeFromTheDump) {
  auto snap = testing::snapshotOf(testing::loadDump("a100_1g_stuck.json"));
  const NodeState* node = snap.node("a100-node-1");
  ASSERT_NE(node, nullptr);
  ASSERT_NE(node->model, nullptr);
  EXPECT_EQ(node->model->name, "A100-40GB");
  EXPECT_EQ(node->migStrategy, MigStrategy::kMixed);
  ASSERT_TRUE(node->geometryKnown);
  ASSERT_EQ(node->gpus.size(), 1u);
  EXPECT_EQ(formatGeometry(node->gpus[0].setting.geometry), "1g.5gb:7");
  EXPECT_TRUE(node->gpus[0].busy);
  EXPECT_TRUE(node->hasGpuPods);
  EXPECT_EQ(node->devices.at("nvidia.com/mig-1g.5gb"), 7);
  EXPECT_EQ(node->used.at("nvidia.com/mig-1g.5gb"), 7);
  EXPECT_EQ(node->capacityFor("nvidia.com/mig-1g.5gb"), 7);
  EXPECT_FALSE(node->inTransition);
  EXPECT_EQ(snap.pods.size(), 7u);
  ASSERT_EQ(snap.hpas.size(), 1u);
  const HpaState& hpa = snap.hpas[0];
  EXPECT_EQ(hpa.maxReplicas, 7);
  EXPECT_TRUE(hpa.hasCondition("ScalingLimited", "True", "TooManyReplicas"));
  ASSERT_EQ(hpa.metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(*hpa.metrics[0].current, 399.3);
  EXPECT_DOUBLE_EQ(hpa.metrics[0].target, 50);
  const ScaleTarget* target = snap.target("default", "Deployment", "triton");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->gpuRequests.at("nvidia.com/mig-1g.5gb"), 1);
}

TEST(SnapshotTest, TimeSlicingPerProfileFromThePluginConfigMap) {
  auto snap = testing::snapshotOf(testing::loadDump("a100_balanced_timeslicing.json"));
  const NodeState* node = snap.node("a100-node-2");
  ASSERT_NE(node, nullptr);
  ASSERT_TRUE(node->devicePluginConfig.has_value());
  EXPECT_EQ(formatGeometry(node->gpus.at(0).setting.geometry), "1g.5gb:2,2g.10gb:1,3g.20gb:1");
  EXPECT_EQ(node->replicasFor("nvidia.com/mig-1g.5gb"), 2);
  EXPECT_EQ(node->capacityFor("nvidia.com/mig-1g.5gb"), 4);
  EXPECT_EQ(node->capacityFor("nvidia.com/mig-3g.20gb"), 2);
  EXPECT_FALSE(node->ownsDevicePluginConfig());
}

TEST(SnapshotTest, T4NodeAndPendingPods) {
  auto snap = testing::snapshotOf(testing::loadDump("t4_timeslicing.json"));
  const NodeState* t4 = snap.node("t4-node-1");
  ASSERT_NE(t4, nullptr);
  EXPECT_EQ(t4->model, nullptr);
  EXPECT_EQ(t4->devices.at("nvidia.com/gpu"), 1);
  EXPECT_DOUBLE_EQ(*t4->gpuMemoryGiB, 15.0);
  int pending = 0;
  for (const auto& p : snap.pods) pending += p.insufficientResource == "nvidia.com/gpu" ? 1 : 0;
  EXPECT_EQ(pending, 3);
}

TEST(SnapshotTest, MpsReplicasFromTheConfigOrGfdLabels) {
  auto t4 = [](std::map<std::string, std::string> labels) {
    labels["nvidia.com/gpu.product"] = "Tesla-T4-SHARED";
    return testing::gpuNode("t4", labels, {{"nvidia.com/gpu", "8"}});
  };
  struct Case {
    const char* what;
    json dump;
    SharingMode mode;
    int replicas;
  };
  const Case cases[] = {
      {"the selected config's sharing.mps",
       testing::list({t4({{"nvidia.com/device-plugin.config", "mps-4"}}),
                      testing::configMap("gpu-operator", "device-plugin-config",
                                         {{"mps-4",
                                           "version: v1\nsharing:\n  mps:\n    "
                                           "resources: [{name: nvidia.com/gpu, replicas: "
                                           "4}]\n"}})}),
       SharingMode::kMps, 4},
      {"without a config, GFD's sharing-strategy and replicas",
       testing::list(
           {t4({{"nvidia.com/gpu.sharing-strategy", "mps"}, {"nvidia.com/gpu.replicas", "4"}})}),
       SharingMode::kMps, 4},
      {"GFD's time-slicing",
       testing::list({t4({{"nvidia.com/gpu.sharing-strategy", "time-slicing"},
                          {"nvidia.com/gpu.replicas", "4"}})}),
       SharingMode::kTimeSlicing, 4},
  };
  for (const auto& c : cases) {
    auto snap = testing::snapshotOf(c.dump);
    const NodeState* n = snap.node("t4");
    ASSERT_NE(n, nullptr) << c.what;
    EXPECT_EQ(n->sharingMode, c.mode) << c.what;
    EXPECT_EQ(n->replicasFor("nvidia.com/gpu"), c.replicas) << c.what;
    EXPECT_EQ(n->devices.at("nvidia.com/gpu"), 2) << c.what << ": 8 units / 4 replicas";
  }
}

TEST(SnapshotTest, GeometryFromGfdLabelsWithoutConfigMap) {
  auto snap = testing::snapshotOf(testing::list({testing::migNode(
      "n", "NVIDIA-A100-SXM4-80GB", 2, "custom", {{"3g.40gb", 2}, {"1g.10gb", 8}})}));
  const NodeState& node = snap.nodes.at(0);
  ASSERT_TRUE(node.geometryKnown);
  ASSERT_EQ(node.gpus.size(), 2u);
  EXPECT_EQ(formatGeometry(node.gpus[1].setting.geometry), "1g.10gb:4,3g.40gb:1");
  EXPECT_FALSE(node.gpus[1].busy);
}

TEST(SnapshotTest, UnsplittableLabelsLeaveGeometryUnknown) {
  auto snap = testing::snapshotOf(testing::list(
      {testing::migNode("n", "NVIDIA-A100-SXM4-40GB", 2, "custom", {{"1g.5gb", 7}})}));
  EXPECT_FALSE(snap.nodes.at(0).geometryKnown);
  EXPECT_EQ(snap.nodes.at(0).devices.at("nvidia.com/mig-1g.5gb"), 7) << "allocatable still counts";
}

TEST(SnapshotTest, PerNodeMigConfigMapWinsOverTheDefault) {
  auto node = testing::migNode("n1", "NVIDIA-A100-SXM4-40GB", 1, "all-balanced", {{"1g.5gb", 7}});
  auto own = testing::configMap("gpu-operator", "n1-mig-config",
                                {{"config.yaml",
                                  "version: v1\nmig-configs:\n  all-balanced:\n  - devices: all\n"
                                  "    mig-enabled: true\n    mig-devices: {\"1g.5gb\": 7}\n"}});
  auto snap = testing::snapshotOf(testing::list({node, testing::defaultMigConfigMap(), own}));
  EXPECT_EQ(formatGeometry(snap.nodes.at(0).gpus.at(0).setting.geometry), "1g.5gb:7");
}

TEST(SnapshotTest, SingleStrategyCountsPhysicalGpus) {
  auto node = testing::migNode("n", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 14, "all-1g.5gb", {}, {},
                               "", "single");
  node["status"]["allocatable"]["nvidia.com/gpu"] = "14";
  auto snap = testing::snapshotOf(testing::list({node, testing::defaultMigConfigMap()}));
  const NodeState& n = snap.nodes.at(0);
  ASSERT_TRUE(n.geometryKnown);
  EXPECT_EQ(n.gpus.size(), 2u);
  EXPECT_EQ(n.devices.at("nvidia.com/gpu"), 14);
}

TEST(SnapshotTest, TransitionsAndCordons) {
  auto pending = testing::migNode("a", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}});
  pending["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending";
  auto paused = testing::migNode("b", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}});
  paused["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] = "paused-for-mig-change";
  auto cordoned = testing::migNode("c", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}});
  cordoned["spec"] = {{"unschedulable", true}};
  auto snap = testing::snapshotOf(testing::list({pending, paused, cordoned}));
  EXPECT_TRUE(snap.node("a")->inTransition);
  EXPECT_TRUE(snap.node("b")->inTransition);
  EXPECT_FALSE(snap.node("c")->inTransition);
  EXPECT_FALSE(snap.node("c")->schedulable);
}

TEST(SnapshotTest, FinishedPodsDoNotMakeGpusBusy) {
  auto node = testing::migNode("n", "NVIDIA-A100-SXM4-40GB", 1, "custom", {{"1g.5gb", 7}});
  auto done = testing::gpuPod("default", "job", 0, "nvidia.com/mig-1g.5gb", "n");
  done["status"]["phase"] = "Succeeded";
  auto snap = testing::snapshotOf(testing::list({node, done}));
  EXPECT_FALSE(snap.nodes.at(0).hasGpuPods);
  EXPECT_TRUE(snap.nodes.at(0).used.empty());
}

TEST(SnapshotTest, PodGpuUseCountsAsTheSchedulerDoes) {
  const std::string mig = "nvidia.com/mig-1g.5gb";
  auto withGpu = [&](const std::string& name, int n) {
    return json{{"name", name}, {"resources", {{"limits", {{mig, std::to_string(n)}}}}}};
  };
  auto sidecar = [&](const std::string& name, int n) {
    json c = withGpu(name, n);
    c["restartPolicy"] = "Always";
    return c;
  };
  const json cpu{{"name", "cpu"}, {"resources", {{"requests", {{"cpu", "1"}}}}}};
  const json claimRef{{"name", "app"}, {"resources", {{"claims", {{{"name", "gpu"}}}}}}};
  struct Row {
    const char* what;
    json spec;
    std::int64_t used;  // of the MIG resource on the node
    bool busy;
  };
  const std::vector<Row> rows{
      {"containers add up", {{"containers", {withGpu("a", 1), withGpu("b", 1)}}}, 2, true},
      {"an init container larger than the containers sets the request",
       {{"containers", {withGpu("a", 1)}}, {"initContainers", {withGpu("init", 3)}}},
       3,
       true},
      {"a GPU only in an init container",
       {{"containers", {cpu}}, {"initContainers", {withGpu("i", 1)}}},
       1,
       true},
      {"a sidecar runs beside the containers",
       {{"containers", {withGpu("a", 1)}}, {"initContainers", {sidecar("s", 1)}}},
       2,
       true},
      {"an init container after a sidecar runs beside it",
       {{"containers", {withGpu("a", 1)}}, {"initContainers", {sidecar("s", 1), withGpu("i", 2)}}},
       3,
       true},
      {"an init container before a sidecar does not",
       {{"containers", {withGpu("a", 1)}}, {"initContainers", {withGpu("i", 1), sidecar("s", 1)}}},
       2,
       true},
      {"a DRA claim makes the GPUs busy without a count",
       {{"containers", {cpu}}, {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "x"}}}}},
       0,
       true},
      {"a container's claim reference too", {{"containers", {claimRef}}}, 0, true},
      {"CPU only", {{"containers", {cpu}}}, 0, false},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto node = testing::migNode("n", "NVIDIA-A100-SXM4-40GB", 1, "custom", {{"1g.5gb", 7}});
    auto pod = testing::gpuPod("default", "app", 0, mig, "n");
    pod["spec"] = row.spec;
    pod["spec"]["nodeName"] = "n";
    auto snap = testing::snapshotOf(testing::list({node, pod}));
    const auto& n = snap.nodes.at(0);
    ASSERT_FALSE(n.gpus.empty());
    auto used = n.used.find(mig);
    EXPECT_EQ(used == n.used.end() ? 0 : used->second, row.used);
    EXPECT_EQ(n.hasGpuPods, row.busy);
    for (const auto& gpu : n.gpus) EXPECT_EQ(gpu.busy, row.busy);
  }
}

TEST(SnapshotTest, ADumpThatIsNoListOfObjectsIsAnError) {
  struct Row {
    const char* what;
    json dump;
    const char* fragment;
  };
  const std::vector<Row> rows{
      {"not an object", json::array({1}), "item must be an object"},
      {"items not a list", json{{"items", 3}}, "items must be a list"},
  };
  for (const auto& row : rows) {
    auto r = buildSnapshot(row.dump);
    ASSERT_FALSE(r.ok()) << row.what;
    EXPECT_NE(r.status().message().find(row.fragment), std::string::npos)
        << row.what << ": " << r.status().message();
  }
}

// An object that does not read is skipped with its reason, and everything else is read as if it
// were absent: no object stops a snapshot.
TEST(SnapshotTest, ObjectsThatDoNotReadAreSkippedWithTheirReason) {
  struct Row {
    const char* what;
    json object;
    SkippedObject skipped;  // `message` is a fragment
  };
  const std::vector<Row> rows{
      {"node name not a string",
       {{"kind", "Node"}, {"metadata", {{"name", 5}}}},
       {"Node", "", "", "", "malformed", "name must be a string"}},
      {"labels not strings",
       {{"kind", "Node"}, {"metadata", {{"name", "n"}, {"labels", {{"a", 1}}}}}},
       {"Node", "", "n", "", "malformed", "labels.a must be a string"}},
      {"bad quantity",
       {{"kind", "Node"},
        {"metadata", {{"name", "n"}}},
        {"status", {{"allocatable", {{"nvidia.com/gpu", "lots"}}}}}},
       {"Node", "", "n", "", "malformed", "allocatable.nvidia.com/gpu"}},
      {"containers not a list",
       {{"kind", "Pod"}, {"metadata", {{"name", "p"}}}, {"spec", {{"containers", "x"}}}},
       {"Pod", "", "p", "", "malformed", "containers must be a list"}},
      {"maxReplicas not an integer",
       {{"kind", "HorizontalPodAutoscaler"},
        {"metadata", {{"name", "h"}, {"namespace", "ns"}, {"uid", "u"}}},
        {"spec", {{"maxReplicas", "7"}}}},
       {"HorizontalPodAutoscaler", "ns", "h", "u", "malformed", "maxReplicas must be an integer"}},
      {"a GPU request beyond what the planner counts",
       {{"kind", "Pod"},
        {"metadata", {{"name", "p"}, {"namespace", "t"}}},
        {"spec",
         {{"containers",
           {{{"name", "c"},
             {"resources", {{"limits", {{"nvidia.com/gpu", "9223372036854775807"}}}}}}}}}}},
       {"Pod", "t", "p", "", "out_of_range", "at most 2^31"}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const json good = testing::gpuNode("good", {}, {{"nvidia.com/gpu", "1"}});
    auto r = buildSnapshot(testing::list({row.object, good}));
    ASSERT_TRUE(r.ok()) << r.status().toString();
    ASSERT_EQ(r->skipped.size(), 1u);
    const SkippedObject& s = r->skipped.front();
    EXPECT_EQ(std::tie(s.kind, s.ns, s.name, s.uid, s.reason),
              std::tie(row.skipped.kind, row.skipped.ns, row.skipped.name, row.skipped.uid,
                       row.skipped.reason));
    EXPECT_NE(s.message.find(row.skipped.message), std::string::npos) << s.message;
    EXPECT_NE(r->node("good"), nullptr) << "the other objects are read";
  }
}

TEST(SnapshotTest, IgnoresOtherKinds) {
  auto snap =
      testing::snapshotOf(testing::list({{{"kind", "Service"}, {"metadata", {{"name", "s"}}}}}));
  EXPECT_TRUE(snap.nodes.empty());
  EXPECT_TRUE(snap.pods.empty());
}

}  // namespace
}  // namespace gpuscale::partition
