#include "gpuscale/partition/snapshot.h"

#include <gtest/gtest.h>

#include <optional>
#include <tuple>

#include "kube_objects.h"
#include "support/rejected_inputs.h"

namespace gpuscale::partition {
namespace snapshot_test {

using gpuscale::testing::expectAllRejected;
using gpuscale::testing::RejectedInput;
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

TEST(SnapshotTest, MigManagerReshapeTaintAndLastOutcome) {
  auto managed = testing::migNode("a", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}});
  auto empty = managed;
  empty["metadata"]["name"] = "b";
  empty["metadata"]["labels"]["nvidia.com/mig.config.state"] = "";
  auto absent = managed;
  absent["metadata"]["name"] = "c";
  absent["metadata"]["labels"].erase("nvidia.com/mig.config.state");
  absent["spec"]["taints"] = {{{"key", "gpuscale.io/reshape"}, {"effect", "NoSchedule"}}};
  absent["metadata"]["annotations"]["gpuscale.io/outcome"] =
      R"({"plan":"p","kind":"mig","result":"timeout","message":"mig-manager stuck","at":"x"})";
  empty["metadata"]["annotations"]["gpuscale.io/outcome"] = "{not json";
  auto snap = testing::snapshotOf(testing::list({managed, empty, absent}));
  EXPECT_TRUE(snap.node("a")->migManaged());
  EXPECT_FALSE(snap.node("b")->migManaged()) << "an empty state is nobody's report";
  EXPECT_FALSE(snap.node("c")->migManaged());
  EXPECT_FALSE(snap.node("a")->reshapeTainted);
  EXPECT_TRUE(snap.node("c")->reshapeTainted);
  EXPECT_EQ(snap.node("c")->lastOutcome, "timeout: mig-manager stuck");
  EXPECT_EQ(snap.node("b")->lastOutcome, "") << "an outcome that does not read says nothing";
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
  const std::vector<RejectedInput<json>> rows{
      {"not an object", json::array({1}), "item must be an object"},
      {"items not a list", json{{"items", 3}}, "items must be a list"},
  };
  expectAllRejected(rows, [](const json& dump) { return buildSnapshot(dump); });
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

// A KEDA-made HPA: owned (controller) by ScaledObject `so`.
json kedaHpa(const std::string& name, const std::string& so, const std::string& soUid, int max) {
  json h = testing::hpa("ml", name, testing::hpaSpec(1, max, max, max, "100", "50", true));
  h["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "keda.sh/v1alpha1"},
                                                   {"kind", "ScaledObject"},
                                                   {"name", so},
                                                   {"uid", soUid},
                                                   {"controller", true},
                                                   {"blockOwnerDeletion", true}}});
  return h;
}

json scaledObject(const std::string& name, const std::string& uid, json spec,
                  const std::string& hpaName) {
  json so{{"apiVersion", "keda.sh/v1alpha1"},
          {"kind", "ScaledObject"},
          {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", uid}}},
          {"spec", std::move(spec)}};
  if (!hpaName.empty()) so["status"] = {{"hpaName", hpaName}};
  return so;
}

TEST(SnapshotTest, TheScaledObjectOwningAnHpaHoldsItsCeiling) {
  struct Row {
    const char* what;
    std::vector<json> objects;
    bool owned;
    std::optional<int> holderMax;  // nullopt: no holder
  };
  const json spec{{"minReplicaCount", 1}, {"maxReplicaCount", 4}};
  const std::vector<Row> rows{
      {"owned, status.hpaName names it",
       {kedaHpa("keda-hpa-vllm", "vllm", "u1", 4),
        scaledObject("vllm", "u1", spec, "keda-hpa-vllm")},
       true,
       4},
      {"owned, before KEDA wrote status.hpaName",
       {kedaHpa("keda-hpa-vllm", "vllm", "u1", 4), scaledObject("vllm", "u1", spec, "")},
       true,
       4},
      {"maxReplicaCount unset: KEDA's default 100",
       {kedaHpa("keda-hpa-vllm", "vllm", "u1", 100),
        scaledObject("vllm", "u1", json::object(), "keda-hpa-vllm")},
       true,
       100},
      {"the ScaledObject is not in the snapshot",
       {kedaHpa("keda-hpa-vllm", "vllm", "u1", 4)},
       true,
       std::nullopt},
      {"another ScaledObject of that name (uid differs)",
       {kedaHpa("keda-hpa-vllm", "vllm", "u1", 4), scaledObject("vllm", "u2", spec, "")},
       true,
       std::nullopt},
      {"the ScaledObject names another HPA now",
       {kedaHpa("keda-hpa-vllm", "vllm", "u1", 4), scaledObject("vllm", "u1", spec, "custom")},
       true,
       std::nullopt},
      {"a plain HPA",
       {testing::hpa("ml", "keda-hpa-vllm", testing::hpaSpec(1, 4, 4, 4, "100", "50", true)),
        scaledObject("vllm", "u1", spec, "keda-hpa-vllm")},
       false,
       std::nullopt},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto snap = testing::snapshotOf(testing::list(row.objects));
    const HpaState* h = snap.hpa("ml", "keda-hpa-vllm");
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h->ownedByScaledObject(), row.owned);
    ASSERT_EQ(h->ceilingHolder.has_value(), row.holderMax.has_value());
    if (!row.holderMax) continue;
    EXPECT_EQ(h->ceilingHolder->maxReplicas, *row.holderMax);
    EXPECT_EQ(h->ceilingHolder->field, "spec.maxReplicaCount");
    EXPECT_EQ(h->ceilingHolder->describe(), "ScaledObject vllm");
    EXPECT_EQ(h->ceilingHolder->uid, "u1");
  }
}

// An HPA on `kind`/`name` (apiVersion `apiVersion`) in namespace ml.
json hpaOn(const std::string& apiVersion, const std::string& kind, const std::string& name) {
  json h = testing::hpa("ml", name, testing::hpaSpec(1, 2, 2, 2, "100", "50", true));
  h["spec"]["scaleTargetRef"] = {{"apiVersion", apiVersion}, {"kind", kind}, {"name", name}};
  return h;
}

json podOf(const std::string& name, std::map<std::string, std::string> labels, int gpus) {
  json p = testing::gpuPod("ml", name, 0, "nvidia.com/gpu", "n1");
  p["metadata"]["name"] = name;
  p["metadata"]["labels"] = labels;
  p["spec"]["containers"] = json::array({testing::container("nvidia.com/gpu", gpus)});
  return p;
}

json scaleOf(const std::string& name, const std::string& uid, int replicas,
             const std::string& selector) {
  return {{"apiVersion", "autoscaling/v1"},
          {"kind", "Scale"},
          {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", uid}}},
          {"spec", {{"replicas", replicas}}},
          {"status", {{"replicas", replicas}, {"selector", selector}}}};
}

TEST(SnapshotTest, AnyWorkloadWithAScaleSubresource) {
  // A custom kind without a pod template: pods through the Scale's selector (set-based terms
  // included), the template from its first pod, pods per replica from the annotation.
  json custom{{"apiVersion", "serving.example.com/v1"},
              {"kind", "InferenceGroup"},
              {"metadata",
               {{"name", "ig"},
                {"namespace", "ml"},
                {"uid", "ig-uid"},
                {"annotations", {{"gpuscale.io/pods-per-replica", "3"}}}}},
              {"spec", {{"replicas", 2}}}};
  // A LeaderWorkerSet: every pod of its groups, size 4, the leader's larger request.
  auto podSpec = [](int gpus) {
    return json{
        {"spec", {{"containers", json::array({testing::container("nvidia.com/gpu", gpus)})}}}};
  };
  json lws{{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
           {"kind", "LeaderWorkerSet"},
           {"metadata", {{"name", "big"}, {"namespace", "ml"}, {"uid", "lws-uid"}}},
           {"spec",
            {{"replicas", 3},
             {"leaderWorkerTemplate",
              {{"size", 4}, {"leaderTemplate", podSpec(2)}, {"workerTemplate", podSpec(1)}}}}}};
  auto snap = testing::snapshotOf(testing::list({
      hpaOn("serving.example.com/v1", "InferenceGroup", "ig"),
      hpaOn("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "big"),
      custom,
      lws,
      scaleOf("ig", "ig-uid", 2, "app=ig,tier in (gpu),!canary"),
      podOf("ig-a", {{"app", "ig"}, {"tier", "gpu"}}, 2),
      podOf("ig-b", {{"app", "ig"}, {"tier", "gpu"}, {"canary", "1"}}, 1),
      podOf("ig-c", {{"app", "ig"}, {"tier", "cpu"}}, 1),
      podOf("big-0", {{"leaderworkerset.sigs.k8s.io/name", "big"}}, 2),
      podOf("big-0-1", {{"leaderworkerset.sigs.k8s.io/name", "big"}}, 1),
      // A kind no HPA scales is ignored.
      {{"kind", "InferenceGroup"}, {"metadata", {{"name", "other"}, {"namespace", "ml"}}}},
  }));
  EXPECT_TRUE(snap.skipped.empty());
  ASSERT_EQ(snap.targets.size(), 2u);
  const ScaleTarget* ig = snap.target("ml", "InferenceGroup", "ig");
  ASSERT_NE(ig, nullptr);
  EXPECT_EQ(ig->specReplicas, 2);
  EXPECT_EQ(ig->podsPerReplica, 3);
  EXPECT_TRUE(ig->templateFromPods);
  EXPECT_EQ(ig->gpuRequests.at("nvidia.com/gpu"), 2) << "from ig-a, the first pod it selects";
  std::vector<std::string> selected;
  for (const auto& p : snap.pods) {
    if (ig->selects(p)) selected.push_back(p.name);
  }
  EXPECT_EQ(selected, std::vector<std::string>{"ig-a"});
  const ScaleTarget* big = snap.target("ml", "LeaderWorkerSet", "big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->specReplicas, 3);
  EXPECT_EQ(big->podsPerReplica, 4);
  EXPECT_EQ(big->gpuRequests.at("nvidia.com/gpu"), 2) << "the leader's request is the larger";
  int bigPods = 0;
  for (const auto& p : snap.pods) bigPods += big->selects(p) ? 1 : 0;
  EXPECT_EQ(bigPods, 2) << "leaders and workers";
}

TEST(SnapshotTest, ScalableWorkloadsThatDoNotRead) {
  struct Row {
    const char* what;
    json workload;
    std::optional<json> scale;
    std::string reason, message;
  };
  auto ig = [](std::map<std::string, std::string> annotations) {
    return json{
        {"apiVersion", "serving.example.com/v1"},
        {"kind", "InferenceGroup"},
        {"metadata",
         {{"name", "ig"}, {"namespace", "ml"}, {"uid", "u"}, {"annotations", annotations}}}};
  };
  const std::vector<Row> rows{
      {"no Scale read", ig({}), std::nullopt, "no_scale", "/scale"},
      {"a selector that does not parse", ig({}), scaleOf("ig", "u", 1, "app in (("), "malformed",
       "status.selector"},
      {"pods per replica 0", ig({{"gpuscale.io/pods-per-replica", "0"}}),
       scaleOf("ig", "u", 1, "app=ig"), "malformed", "pods-per-replica"},
      {"pods per replica beyond int32", ig({{"gpuscale.io/pods-per-replica", "4294967296"}}),
       scaleOf("ig", "u", 1, "app=ig"), "out_of_range", "pods-per-replica"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    std::vector<json> items{hpaOn("serving.example.com/v1", "InferenceGroup", "ig"), row.workload};
    if (row.scale) items.push_back(*row.scale);
    auto snap = testing::snapshotOf(testing::list(items));
    EXPECT_TRUE(snap.targets.empty());
    ASSERT_EQ(snap.skipped.size(), 1u);
    EXPECT_EQ(snap.skipped[0].kind, "InferenceGroup");
    EXPECT_EQ(snap.skipped[0].reason, row.reason);
    EXPECT_NE(snap.skipped[0].message.find(row.message), std::string::npos)
        << snap.skipped[0].message;
  }
}

TEST(SnapshotTest, IgnoresOtherKinds) {
  auto snap =
      testing::snapshotOf(testing::list({{{"kind", "Service"}, {"metadata", {{"name", "s"}}}}}));
  EXPECT_TRUE(snap.nodes.empty());
  EXPECT_TRUE(snap.pods.empty());
}

// Scale targets are found by namespace, kind and name whatever order the dump gives them in
// (ClusterSnapshot::target searches the sorted targets).
TEST(SnapshotTest, FindsEveryScaleTargetByNamespaceKindAndName) {
  std::vector<json> items;
  const std::vector<std::tuple<std::string, std::string, std::string>> targets = {
      {"team-b", "Deployment", "web"},   {"team-a", "StatefulSet", "web"},
      {"team-a", "Deployment", "web"},   {"team-a", "Deployment", "api"},
      {"team-a-x", "Deployment", "api"}, {"team", "Deployment", "web-2"},
  };
  for (const auto& [ns, kind, name] : targets) {
    json w = testing::deployment(ns, name, 1, "nvidia.com/gpu");
    w["kind"] = kind;
    items.push_back(std::move(w));
  }
  const auto snap = testing::snapshotOf(testing::list(items));
  for (const auto& [ns, kind, name] : targets) {
    SCOPED_TRACE(ns + " " + kind + " " + name);
    const ScaleTarget* t = snap.target(ns, kind, name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(std::tie(t->ns, t->kind, t->name), std::tie(ns, kind, name));
  }
  for (const auto& [ns, kind, name] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"team-a", "Deployment", "we"},
           {"team-a", "ReplicaSet", "web"},
           {"team-c", "Deployment", "web"},
           {"", "", ""}}) {
    EXPECT_EQ(snap.target(ns, kind, name), nullptr) << ns << " " << kind << " " << name;
  }
}

}  // namespace snapshot_test
}  // namespace gpuscale::partition
