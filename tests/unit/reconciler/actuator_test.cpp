// KubeActuator and the controller pass against the fake API: the order of writes through the GPU
// Operator's interfaces, failure handling, resume from annotations, the in-flight limit and dry
// run.
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/k8s/well_known_keys.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "actuator_fixture.h"
#include "cluster_fixture.h"
#include "gpuscale/reconciler/controller.h"

namespace gpuscale::reconciler {
namespace actuator_test {

using nlohmann::json;
using testing::ActuatorTest;
using testing::hpaRef;
using testing::kReshapeNode;
using testing::kSlicedNode;
using testing::nodeRef;
using testing::objectsOf;
using testing::RecordingClient;
using testing::Write;
using namespace std::chrono_literals;

TEST_F(ActuatorTest, ConfigBeforeLabelAndMaxReplicasOnlyAfterAllocatable) {
  auto c = controller();
  auto first = pass(*c, t0_);
  ASSERT_EQ(first.plan.actions.size(), 3u) << partition::planToJson(first.plan).dump();

  // The ConfigMaps were written before the labels that select them flipped.
  int migConfig = client_->firstWhere([](const Write& w) {
    return w.resource == "configmaps" && w.name == "gpuscale-mig-parted-config";
  });
  int migLabel = client_->firstWhere(
      [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); });
  int pluginConfig = client_->firstWhere([](const Write& w) {
    return w.resource == "configmaps" && w.name == "device-plugin-config";
  });
  int pluginLabel = client_->firstWhere(
      [](const Write& w) { return flips(w, kSlicedNode, k8s::kDevicePluginConfigLabel); });
  ASSERT_GE(migConfig, 0);
  ASSERT_GE(pluginConfig, 0);
  EXPECT_LT(migConfig, migLabel);
  EXPECT_LT(pluginConfig, pluginLabel);
  // The HPA's intent was recorded (in the reconciler's state store) before any node changed.
  int hpaIntent = client_->firstWhere(
      [](const Write& w) { return w.resource == "configmaps" && w.name == stateName(); });
  EXPECT_LT(hpaIntent, migLabel);

  const std::string config = k8s::labelOf(node(kReshapeNode), k8s::kMigConfigLabel);
  EXPECT_EQ(config.rfind("gpuscale-a100-node-3-", 0), 0u);
  auto cm = fake_->get(kube::ResourceRef::collection("", "v1", "configmaps", "gpu-operator")
                           .named("gpuscale-mig-parted-config"));
  ASSERT_TRUE(cm.ok());
  EXPECT_NE((*cm)["data"]["config.yaml"].get<std::string>().find(config), std::string::npos);
  EXPECT_EQ(maxReplicas(), 7);

  // mig-manager answers success but the device plugin has not re-advertised: still waiting.
  setNode(kReshapeNode, {{"nvidia.com/mig.config.state", "success"}});
  pass(*c, t0_ + 10s);
  EXPECT_EQ(maxReplicas(), 7);
  EXPECT_FALSE(k8s::annotationOf(node(kReshapeNode), k8s::kIntentAnnotation).empty());

  // Allocatable shows the new partitions on both nodes: now, and only now, maxReplicas grows.
  setNode(kReshapeNode, json::object(),
          {{"nvidia.com/mig-1g.5gb", "14"}, {"nvidia.com/mig-3g.20gb", "0"}});
  setNode(kSlicedNode, json::object(), {{"nvidia.com/mig-1g.5gb", "14"}});
  auto last = pass(*c, t0_ + 20s);
  EXPECT_GT(maxReplicas(), 7);
  EXPECT_LE(maxReplicas(), 28);
  int raise = client_->firstWhere([](const Write& w) {
    return w.resource == "horizontalpodautoscalers" && w.body.contains("spec");
  });
  EXPECT_GT(raise, migLabel);
  EXPECT_TRUE(k8s::annotationOf(node(kReshapeNode), k8s::kIntentAnnotation).empty());
  EXPECT_EQ(
      decodeNodeOutcome(k8s::annotationOf(node(kReshapeNode), k8s::kOutcomeAnnotation))->result,
      Outcome::kSucceeded);
  EXPECT_TRUE(k8s::annotationOf(hpa(), k8s::kIntentAnnotation).empty());
  ASSERT_TRUE(record().has_value());
  EXPECT_FALSE(record()->intent.has_value());
  EXPECT_EQ(record()->originalMaxReplicas, 7);
  EXPECT_EQ(record()->lastChange, t0_ + 20s);
  EXPECT_FALSE(k8s::annotationOf(hpa(), k8s::kStatusAnnotation).empty());
  EXPECT_EQ(events_->withReason("MaxReplicasRaised").size(), 1u);
  EXPECT_EQ(events_->withReason("MigReconfigureSucceeded").size(), 1u);
  EXPECT_EQ(events_->withReason("TimeSlicingSucceeded").size(), 1u);
  // On device-plugin nodes the Events name node allocatable.
  for (const auto* reason :
       {"MigReconfigurePlanned", "MigReconfigureSucceeded", "MaxReplicasRaised"}) {
    auto e = events_->withReason(reason);
    ASSERT_FALSE(e.empty()) << reason;
    EXPECT_NE(e[0].message.find("allocatable"), std::string::npos) << e[0].message;
    EXPECT_EQ(e[0].message.find("published devices"), std::string::npos) << e[0].message;
  }
  ASSERT_EQ(last.report.ceilingToCapacitySeconds.size(), 1u);
  EXPECT_DOUBLE_EQ(last.report.ceilingToCapacitySeconds[0], 20.0);
  // Each node's change reports its lever and time, anticipation's measured lead time.
  std::map<std::string, partition::Lever> levers;
  for (const LeverTiming& t : last.report.leverSeconds) {
    levers[t.node] = t.lever;
    EXPECT_GE(t.seconds, 0) << t.node;
    EXPECT_LE(t.seconds, 20.0) << t.node;
  }
  EXPECT_EQ(levers, (std::map<std::string, partition::Lever>{
                        {kReshapeNode, partition::Lever::kMigReshape},
                        {kSlicedNode, partition::Lever::kTimeSlicing}}));
  // Each label was set exactly once.
  EXPECT_EQ(client_->countWhere(
                [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); }),
            1);
}

TEST_F(ActuatorTest, APromiseCutLowersTheRaiseInFlight) {
  auto c = controller();
  pass(*c, t0_);
  ASSERT_TRUE(record().has_value() && record()->intent.has_value());
  const int from = record()->intent->from;
  ASSERT_GT(record()->intent->to, from + 2);

  // A later plan gives part of the promise to an HPA of higher priority (contention).
  partition::Plan plan;
  plan.promiseCuts.push_back({"default", "triton", record()->intent->to, from + 2});
  auto apply = [&](const partition::Plan& p) {
    const auto objects = objectsOf(*fake_);
    std::vector<partition::KubeItem> items;
    for (const auto& o : objects) items.push_back({{}, &o});
    auto snapshot = partition::buildSnapshot(items);
    ASSERT_TRUE(snapshot.ok());
    HpaStateStore store(client_, StateStoreOptions{});
    ASSERT_TRUE(store.load().ok());
    ClusterState state;
    state.snapshot = &*snapshot;
    state.store = &store;
    KubeActuator(client_, events_, std::make_shared<NodeLevelGpuPodMapping>(), options_)
        .apply(p, state, t0_ + 5s);
  };
  apply(plan);
  EXPECT_EQ(record()->intent->to, from + 2);
  EXPECT_EQ(events_->withReason("PromiseReduced").size(), 1u);
  // A cut above what is left changes nothing.
  plan.promiseCuts[0].to = from + 5;
  apply(plan);
  EXPECT_EQ(record()->intent->to, from + 2);
  EXPECT_EQ(events_->withReason("PromiseReduced").size(), 1u);

  // The partitions arrive: the raise goes to the cut promise, not to the first plan's.
  setNode(kReshapeNode, {{"nvidia.com/mig.config.state", "success"}},
          {{"nvidia.com/mig-1g.5gb", "14"}, {"nvidia.com/mig-3g.20gb", "0"}});
  setNode(kSlicedNode, json::object(), {{"nvidia.com/mig-1g.5gb", "14"}});
  pass(*c, t0_ + 20s);
  EXPECT_EQ(maxReplicas(), from + 2);
  EXPECT_FALSE(record()->intent.has_value());
}

TEST_F(ActuatorTest, PlansNeedingMigAndTimeSlicingFinishInOneRoundWithCapacityFirst) {
  struct Row {
    const char* what;
    const char* policy;  // "" = the built-in default
    int maxNodesInFlight;
    // Each label flip's intent must expect exactly this allocatable (resource -> count), keyed
    // by "<node> <label key>".
    std::map<std::string, std::map<std::string, std::int64_t>> expect;
    int raisePass;  // the pass (0-based) that raises maxReplicas
    int maxReplicas;
  };
  const std::vector<Row> rows{
      {"reshape one node, time-slice another",
       "",
       2,
       {{"a100-node-3 nvidia.com/mig.config", {{"nvidia.com/mig-1g.5gb", 14}}},
        {"a100-node-1 nvidia.com/device-plugin.config", {{"nvidia.com/mig-1g.5gb", 14}}}},
       1,
       28},
      {"reshape a node and time-slice its new partitions",
       "policies:\n- name: default\n  hpaNamespaces: [default]\n"
       "  levers: [migReshape, timeSlicing]\n"
       "  nodeSelector: {nvidia.com/mig.config: all-3g.20gb}\n  maxReplicas: {hard: 40}\n",
       1,
       {{"a100-node-3 nvidia.com/mig.config", {{"nvidia.com/mig-1g.5gb", 14}}},
        {"a100-node-3 nvidia.com/device-plugin.config", {{"nvidia.com/mig-1g.5gb", 42}}}},
       2,
       40},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    reset(partition::testing::loadDump("a100_idle_reshape.json"));
    options_.maxNodesInFlight = row.maxNodesInFlight;
    const std::string policyFile = ::testing::TempDir() + "combined-policy.yaml";
    if (*row.policy != '\0') std::ofstream(policyFile) << row.policy;
    auto c = controller(false, std::make_shared<NodeLevelGpuPodMapping>(),
                        *row.policy != '\0' ? policyFile : "");

    // mig-manager and the device plugin: a node whose label now selects the config reports
    // success and advertises what the config creates (checked against the row).
    std::set<std::string> operated;
    auto operate = [&] {
      for (const char* name : {kReshapeNode, kSlicedNode}) {
        auto intent = decodeNodeIntent(k8s::annotationOf(node(name), k8s::kIntentAnnotation));
        if (!intent || intent->phase != NodeOpPhase::kApplied) continue;
        const std::string key = std::string(name) + " " + std::string(intent->labelKey());
        ASSERT_TRUE(row.expect.contains(key)) << key;
        EXPECT_EQ(intent->expect, row.expect.at(key)) << key;
        json allocatable = json::object();
        for (const auto& [res, n] : row.expect.at(key)) allocatable[res] = std::to_string(n);
        ASSERT_TRUE(
            client_
                ->patch(nodeRef(name), kube::PatchType::kMerge,
                        {{"metadata", {{"labels", {{"nvidia.com/mig.config.state", "success"}}}}},
                         {"status", {{"allocatable", allocatable}}}})
                .ok());
        operated.insert(key);
      }
    };
    int raisedAt = -1;
    for (int p = 0; p < 6 && raisedAt < 0; ++p) {
      pass(*c, t0_ + std::chrono::seconds(10 * p));
      if (maxReplicas() != 7) raisedAt = p;
      operate();
    }
    EXPECT_EQ(raisedAt, row.raisePass);
    EXPECT_EQ(maxReplicas(), row.maxReplicas);
    EXPECT_EQ(operated.size(), row.expect.size()) << "every planned change was applied";
    // Capacity was real before maxReplicas moved: the one raise follows the last allocatable.
    auto isRaise = [](const Write& w) {
      return w.resource == "horizontalpodautoscalers" && w.body.contains("spec");
    };
    EXPECT_EQ(client_->countWhere(isRaise), 1);
    int lastAllocatable = -1;
    auto writes = client_->writes();
    for (std::size_t i = 0; i < writes.size(); ++i) {
      if (writes[i].resource == "nodes" && writes[i].body.contains("status")) {
        lastAllocatable = static_cast<int>(i);
      }
    }
    EXPECT_GT(client_->firstWhere(isRaise), lastAllocatable);
    for (const auto& [key, _] : row.expect) {
      const std::string name = key.substr(0, key.find(' '));
      const std::string label = key.substr(key.find(' ') + 1);
      EXPECT_EQ(client_->countWhere([&](const Write& w) { return flips(w, name, label); }), 1)
          << key << " flipped once";
      EXPECT_TRUE(k8s::annotationOf(node(name), k8s::kIntentAnnotation).empty());
      EXPECT_EQ(decodeNodeOutcome(k8s::annotationOf(node(name), k8s::kOutcomeAnnotation))->result,
                Outcome::kSucceeded);
    }
    EXPECT_TRUE(k8s::annotationOf(hpa(), k8s::kIntentAnnotation).empty());
    EXPECT_EQ(events_->withReason("MaxReplicasRaised").size(), 1u);
    EXPECT_EQ(events_->withReason("MigReconfigureSucceeded").size(), 1u);
    EXPECT_EQ(events_->withReason("TimeSlicingSucceeded").size(), 1u);
    EXPECT_TRUE(events_->withReason("PartitionChangeIncomplete").empty());
  }
}

TEST_F(ActuatorTest, FailedMigManagerRunIsRevertedAndOperandsUnpaused) {
  options_.maxNodesInFlight = 1;
  auto c = controller();
  pass(*c, t0_);
  const json before = node(kReshapeNode);
  auto intent = decodeNodeIntent(k8s::annotationOf(before, k8s::kIntentAnnotation));
  ASSERT_TRUE(intent.has_value());
  EXPECT_EQ(intent->previous, "all-3g.20gb");
  // The HPA waits for the only node the limit let start.
  EXPECT_EQ(record()->intent->nodes, std::vector<std::string>{kReshapeNode});
  EXPECT_TRUE(k8s::labelOf(node(kSlicedNode), k8s::kDevicePluginConfigLabel).empty());

  setNode(kReshapeNode, {{"nvidia.com/mig.config.state", "failed"},
                         {"nvidia.com/gpu.deploy.device-plugin", "paused-for-mig-change"}});
  pass(*c, t0_ + 30s);
  const json after = node(kReshapeNode);
  EXPECT_EQ(k8s::labelOf(after, k8s::kMigConfigLabel), "all-3g.20gb");
  EXPECT_EQ(k8s::labelOf(after, "nvidia.com/gpu.deploy.device-plugin"), "true");
  EXPECT_TRUE(k8s::annotationOf(after, k8s::kIntentAnnotation).empty());
  EXPECT_EQ(decodeNodeOutcome(k8s::annotationOf(after, k8s::kOutcomeAnnotation))->result,
            Outcome::kFailed);
  EXPECT_FALSE(k8s::annotationOf(after, k8s::kBackoffAnnotation).empty());
  EXPECT_EQ(events_->withReason("MigReconfigureFailed").size(), 1u);
  EXPECT_EQ(events_->withReason("OperandsUnpaused").size(), 1u);
  EXPECT_EQ(events_->withReason("PartitionChangeIncomplete").size(), 1u);
  EXPECT_EQ(maxReplicas(), 7);

  // Backing off: the next passes do not touch the node again.
  setNode(kReshapeNode, {{"nvidia.com/mig.config.state", "success"}});
  pass(*c, t0_ + 60s);
  EXPECT_EQ(client_->countWhere(
                [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); }),
            2);  // the flip and the revert
}

TEST_F(ActuatorTest, MigManagerThatNeverAnswersTimesOutAndRestoresThePreviousConfig) {
  options_.maxNodesInFlight = 1;
  options_.migTimeout = 120s;
  auto c = controller();
  pass(*c, t0_);
  setNode(kReshapeNode, {{"nvidia.com/mig.config.state", "pending"},
                         {"nvidia.com/gpu.deploy.device-plugin", "paused-for-mig-change"}});
  pass(*c, t0_ + 60s);
  EXPECT_FALSE(k8s::annotationOf(node(kReshapeNode), k8s::kIntentAnnotation).empty());
  pass(*c, t0_ + 121s);
  const json after = node(kReshapeNode);
  EXPECT_EQ(k8s::labelOf(after, k8s::kMigConfigLabel), "all-3g.20gb");
  EXPECT_EQ(decodeNodeOutcome(k8s::annotationOf(after, k8s::kOutcomeAnnotation))->result,
            Outcome::kTimedOut);
  // Still pending: mig-manager owns the operand labels while it runs.
  EXPECT_EQ(k8s::labelOf(after, "nvidia.com/gpu.deploy.device-plugin"), "paused-for-mig-change");
  EXPECT_EQ(events_->withReason("MigReconfigureTimedOut").size(), 1u);
  EXPECT_EQ(maxReplicas(), 7);
}

TEST_F(ActuatorTest, AReshapeTaintWithoutAnOperationIsRemovedAtStartAndAfterAHandEdit) {
  // Left behind by a reconciler that stopped between the taint and the intent's end: the first
  // pass of a new process removes it.
  const json taint = {{{"key", std::string(k8s::kReshapeTaint)}, {"effect", "NoSchedule"}}};
  ASSERT_TRUE(
      fake_->patch(nodeRef(kSlicedNode), kube::PatchType::kMerge, {{"spec", {{"taints", taint}}}})
          .ok());
  options_.maxNodesInFlight = 1;
  auto c = controller();
  auto first = pass(*c, t0_);
  EXPECT_EQ(node(kSlicedNode)["spec"].value("taints", json::array()), json::array());
  EXPECT_EQ(events_->withReason("ReshapeTaintRemoved").size(), 1u);
  EXPECT_EQ(first.report.stalls, std::vector<std::string>{"orphan_taint"});

  // The reshape the first pass started keeps its taint while its intent lives...
  ASSERT_FALSE(k8s::annotationOf(node(kReshapeNode), k8s::kIntentAnnotation).empty());
  pass(*c, t0_ + 5s);
  EXPECT_FALSE(node(kReshapeNode)["spec"].value("taints", json::array()).empty());
  // ...and loses it on the next pass once someone removes the intent by hand.
  ASSERT_TRUE(fake_
                  ->patch(nodeRef(kReshapeNode), kube::PatchType::kMerge,
                          {{"metadata", {{"annotations", {{k8s::kIntentAnnotation, nullptr}}}}}})
                  .ok());
  auto later = pass(*c, t0_ + 10s);
  EXPECT_EQ(node(kReshapeNode)["spec"].value("taints", json::array()), json::array());
  EXPECT_EQ(events_->withReason("ReshapeTaintRemoved").size(), 2u);
  EXPECT_EQ(later.report.stalls, std::vector<std::string>{"orphan_taint"});
}

TEST_F(ActuatorTest, ANodeWithoutMigManagerIsNeverTainted) {
  // mig-manager absent: no nvidia.com/mig.config.state on the idle A100.
  json patch{{"metadata", {{"labels", {{std::string(k8s::kMigConfigStateLabel), nullptr}}}}}};
  ASSERT_TRUE(fake_->patch(nodeRef(kReshapeNode), kube::PatchType::kMerge, patch).ok());
  auto c = controller();
  auto first = pass(*c, t0_);
  for (const auto& a : first.plan.actions) {
    EXPECT_FALSE(std::holds_alternative<partition::MigReconfigure>(a))
        << partition::planToJson(first.plan).dump();
  }
  const json after = node(kReshapeNode);
  EXPECT_TRUE(k8s::annotationOf(after, k8s::kIntentAnnotation).empty());
  EXPECT_EQ(after["spec"].value("taints", json::array()), json::array());
  EXPECT_EQ(k8s::labelOf(after, k8s::kMigConfigLabel), "all-3g.20gb");
  bool said = false;
  for (const auto& why : first.plan.why) {
    for (const auto& r : why.reasons) {
      said = said || (r.code == partition::WhyCode::kMigNotManaged && r.node == kReshapeNode);
    }
  }
  EXPECT_TRUE(said) << "explain names the node as not MIG-managed";
}

TEST_F(ActuatorTest, PodStartingBetweenPlanAndActionStopsTheReshape) {
  options_.maxNodesInFlight = 1;
  auto c = controller();
  auto stale = objectsOf(*fake_);  // the plan is made from this view
  auto pod =
      partition::testing::gpuPod("default", "other", 0, "nvidia.com/mig-3g.20gb", kReshapeNode);
  ASSERT_TRUE(fake_->create(kube::ResourceRef::collection("", "v1", "pods", "default"), pod).ok());
  auto r = c->pass(stale, t0_);
  ASSERT_FALSE(r.plan.actions.empty());
  EXPECT_EQ(k8s::labelOf(node(kReshapeNode), k8s::kMigConfigLabel), "all-3g.20gb");
  EXPECT_EQ(client_->countWhere(
                [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); }),
            0);
  EXPECT_EQ(events_->withReason("ReshapeSkipped").size(), 1u);
}

TEST_F(ActuatorTest, PodBetweenPlanAndActionIsCheckedPerGpuWhenTheMappingKnows) {
  struct Row {
    const char* what;
    std::optional<GpuOccupancy> answer;
    int flips;  // of nvidia.com/mig.config
  };
  // The plan rebuilds GPUs 0 and 1 of the reshape node.
  const std::vector<Row> rows{
      {"unknown mapping: the whole node is busy", std::nullopt, 0},
      {"the new pod holds GPU 1, which is rebuilt", GpuOccupancy{{0, 1}, {1}}, 0},
      {"GPU 1 not reported: unknown is busy", GpuOccupancy{{0}, {}}, 0},
      {"the mapping places the pod on no rebuilt GPU", GpuOccupancy{{0, 1, 2}, {2}}, 1},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    reset(partition::testing::loadDump("a100_idle_reshape.json"));
    options_.maxNodesInFlight = 1;
    auto mapping = std::make_shared<testing::FixedGpuPodMapping>(row.answer);
    auto c = controller(false, mapping);
    auto stale = objectsOf(*fake_);  // the plan is made from this view: no pod on the node
    auto pod =
        partition::testing::gpuPod("default", "other", 0, "nvidia.com/mig-3g.20gb", kReshapeNode);
    ASSERT_TRUE(
        fake_->create(kube::ResourceRef::collection("", "v1", "pods", "default"), pod).ok());
    c->pass(stale, t0_);
    EXPECT_EQ(client_->countWhere(
                  [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); }),
              row.flips);
    EXPECT_EQ(mapping->asked[kReshapeNode], std::set<std::string>{"default/other-0"})
        << "the actuator asks with the pods the API lists on the node now";
  }
}

// A MIG mode change resets every GPU of its node: right before the flip the actuator checks every
// GPU of the node for pods, not only the one whose mode changes. Node `pair` has two A100s with MIG
// disabled; the plan enables MIG on GPU 0 for the app blocked on `busy`.
TEST_F(ActuatorTest, ModeChangeIsCheckedOnEveryGpuOfTheNode) {
  struct Row {
    const char* what;
    bool podOnGpu1;
    int flips;  // of nvidia.com/mig.config on `pair`
  };
  const std::vector<Row> rows{
      {"nothing appeared on the node: the change goes ahead", false, 1},
      {"a pod appeared on GPU 1, which keeps its setting: the reset would take it", true, 0},
  };
  const std::string k1g = "nvidia.com/mig-1g.5gb";
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto pair = partition::testing::migNode("pair", "NVIDIA-A100-SXM4-40GB", 2, "all-disabled", {});
    pair["status"]["allocatable"]["nvidia.com/gpu"] = "2";
    std::vector<json> items{partition::testing::migNode("busy", "NVIDIA-A100-SXM4-40GB", 1,
                                                        "all-1g.5gb", {{"1g.5gb", 7}}),
                            pair};
    partition::testing::append(items, partition::testing::blockedApp("app", k1g, "busy", 7, 0));
    reset(partition::testing::migCluster(items));
    options_.maxNodesInFlight = 1;
    const std::string policyFile = ::testing::TempDir() + "mode-change-policy.yaml";
    std::ofstream(policyFile) << "policies:\n- name: default\n  hpaNamespaces: [default]\n"
                                 "  maxReplicas: {hard: 14}\n  migModeChange: {enabled: true}\n";
    // GPU 1 of `pair` holds a pod when one is there; `busy`'s only GPU is busy.
    auto mapping = std::make_shared<testing::FixedGpuPodMapping>(
        GpuOccupancy{{0, 1}, {row.podOnGpu1 ? 1 : 0}});
    auto c = controller(false, mapping, policyFile);
    auto stale = objectsOf(*fake_);  // the plan is made from this view: no pod on `pair`
    if (row.podOnGpu1) {
      auto pod = partition::testing::gpuPod("default", "other", 0, "nvidia.com/gpu", "pair");
      ASSERT_TRUE(
          fake_->create(kube::ResourceRef::collection("", "v1", "pods", "default"), pod).ok());
    }
    auto r = c->pass(stale, t0_);
    ASSERT_FALSE(r.plan.actions.empty());
    const auto* mig = std::get_if<partition::MigReconfigure>(&r.plan.actions.front());
    ASSERT_NE(mig, nullptr);
    EXPECT_EQ(mig->node, "pair");
    EXPECT_TRUE(mig->switchesMigMode());
    EXPECT_EQ(
        client_->countWhere([](const Write& w) { return flips(w, "pair", k8s::kMigConfigLabel); }),
        row.flips);
  }
}

TEST_F(ActuatorTest, RestartedReconcilerResumesFromTheIntentAnnotation) {
  options_.maxNodesInFlight = 1;
  {
    auto first = controller();
    pass(*first, t0_);
  }
  // The process died after flipping the label. A new one must not flip it again nor plan anew.
  auto second = controller();
  pass(*second, t0_ + 5s);
  pass(*second, t0_ + 10s);
  EXPECT_EQ(client_->countWhere(
                [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); }),
            1);
  EXPECT_EQ(client_->countWhere([](const Write& w) {
    return w.resource == "horizontalpodautoscalers" && w.body.contains("spec");
  }),
            0);
  setNode(kReshapeNode, {{"nvidia.com/mig.config.state", "success"}},
          {{"nvidia.com/mig-1g.5gb", "14"}, {"nvidia.com/mig-3g.20gb", "0"}});
  pass(*second, t0_ + 20s);
  EXPECT_GT(maxReplicas(), 7);
  EXPECT_EQ(events_->withReason("MaxReplicasRaised").size(), 1u);
}

TEST_F(ActuatorTest, RestartAfterIntentBeforeTheFlipFinishesTheStepOnce) {
  // A process that died right after recording its intent (phase "prepared").
  NodeIntent intent;
  intent.plan = "p1";
  intent.kind = NodeOpKind::kTimeSlicing;
  intent.label = "gpuscale-a100-node-1-0000beef";
  intent.config = "version: v1\nflags:\n  migStrategy: mixed\n";
  intent.expect = {{"nvidia.com/mig-1g.5gb", 14}};
  intent.started = t0_;
  ASSERT_TRUE(fake_
                  ->patch(nodeRef(kSlicedNode), kube::PatchType::kMerge,
                          {{"metadata",
                            {{"annotations", {{"gpuscale.io/intent", encodeNodeIntent(intent)}}}}}})
                  .ok());
  options_.maxNodesInFlight = 1;
  auto c = controller();
  pass(*c, t0_ + 1s);
  pass(*c, t0_ + 2s);
  EXPECT_EQ(k8s::labelOf(node(kSlicedNode), k8s::kDevicePluginConfigLabel), intent.label);
  EXPECT_EQ(client_->countWhere([&](const Write& w) {
    return flips(w, kSlicedNode, k8s::kDevicePluginConfigLabel);
  }),
            1);
  // The in-flight limit of 1 is taken: the reshape of the other node waits.
  EXPECT_TRUE(k8s::annotationOf(node(kReshapeNode), k8s::kIntentAnnotation).empty());
}

TEST_F(ActuatorTest, ConflictingWriteIsRetriedOnTheNewVersion) {
  options_.maxNodesInFlight = 1;
  fake_->failNext("patch", core::Status(409, "Conflict", "the object has been modified"), 1);
  auto c = controller();
  pass(*c, t0_);
  EXPECT_FALSE(k8s::annotationOf(node(kReshapeNode), k8s::kIntentAnnotation).empty());
  EXPECT_EQ(client_->countWhere(
                [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); }),
            1);
}

TEST_F(ActuatorTest, RetriedConflictsEndTheirPassWithOneEventPerObject) {
  options_.maxNodesInFlight = 1;
  auto retried = std::make_shared<RetriedWrites>();
  auto writer = std::make_shared<RetryNotingClient>(client_, retried);
  auto actuator = std::make_shared<KubeActuator>(
      writer, events_, std::make_shared<NodeLevelGpuPodMapping>(), options_);
  Controller c(writer, actuator, testing::seedPolicies(), events_,
               std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()), {},
               nullptr, retried);
  // The first patch of the pass (the node's intent; the HPA's is a new entry in the state store)
  // meets two conflicting writes before it lands.
  fake_->failNext("patch", core::Status(409, "Conflict", "the object has been modified"), 2);
  pass(c, t0_);
  auto conflicts = events_->withReason("WriteConflictRetried");
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].target.kind, "Node");
  EXPECT_EQ(conflicts[0].count, 2);
  EXPECT_EQ(client_->countWhere(
                [](const Write& w) { return flips(w, kReshapeNode, k8s::kMigConfigLabel); }),
            1);
  pass(c, t0_ + 1s);
  EXPECT_EQ(events_->withReason("WriteConflictRetried").size(), 1u) << "nothing new to report";
}

TEST_F(ActuatorTest, SomeoneElseChangingTheLabelSupersedesTheOperation) {
  options_.maxNodesInFlight = 1;
  auto c = controller();
  pass(*c, t0_);
  setNode(kReshapeNode, {{"nvidia.com/mig.config", "all-balanced"}});
  pass(*c, t0_ + 5s);
  EXPECT_EQ(
      decodeNodeOutcome(k8s::annotationOf(node(kReshapeNode), k8s::kOutcomeAnnotation))->result,
      Outcome::kSuperseded);
  EXPECT_EQ(k8s::labelOf(node(kReshapeNode), k8s::kMigConfigLabel), "all-balanced");
}

TEST_F(ActuatorTest, DryRunWritesNothing) {
  auto c = controller(/*dryRun=*/true);
  const std::string before = fake_->currentResourceVersion();
  auto r = pass(*c, t0_);
  EXPECT_FALSE(r.plan.actions.empty());
  EXPECT_EQ(fake_->currentResourceVersion(), before);
  EXPECT_TRUE(client_->writes().empty());
  EXPECT_NE(c->lastPlanJson().find("MigReconfigure"), std::string::npos);
}

}  // namespace actuator_test
}  // namespace gpuscale::reconciler
