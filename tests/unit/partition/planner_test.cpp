#include "gpuscale/partition/planner.h"

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/config_name.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace planner_test {

using testing::json;
using testing::k1g;
using testing::kNow;

TimePoint at(const char* rfc3339) { return *core::parseRfc3339(rfc3339); }

// The reconciler's recorded state of one HPA (what its state store gives the snapshot).
struct Recorded {
  std::string ns, name;
  std::optional<TimePoint> lastChange;
  std::optional<int> originalMaxReplicas;
};

std::unique_ptr<testing::Planned> planFor(const json& dump, PolicySet policies = defaultPolicies(),
                                          const std::vector<Recorded>& recorded = {}) {
  return testing::planned(dump, std::move(policies), kNow, [&](ClusterSnapshot& snapshot) {
    for (const auto& r : recorded) {
      for (auto& h : snapshot.hpas) {
        if (h.ns != r.ns || h.name != r.name) continue;
        h.lastChange = r.lastChange;
        h.originalMaxReplicas = r.originalMaxReplicas;
      }
    }
  });
}

json actions(const Plan& plan) { return json::parse(planToJson(plan).dump())["actions"]; }

TEST(PlannerTest, SeedA100StuckAtSevenTimeSlicesTheBusyGpu) {
  auto p = planFor(testing::loadDump("a100_1g_stuck.json"));
  EXPECT_EQ(json::parse(planToJson(p->plan).dump()), json::parse(R"({
    "demands": [{"namespace": "default", "name": "triton", "resource": "nvidia.com/mig-1g.5gb",
                 "ceiling": 7, "wanted": 56}],
    "actions": [
      {"kind": "TimeSlicing", "node": "a100-node-1", "resource": "nvidia.com/mig-1g.5gb", "replicas": 4},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "triton", "from": 7, "to": 28}],
    "capacityAfter": [{"namespace": "default", "name": "triton", "ceiling": 28}]})"));
}

// The T4 story under the scheduler's exact nodeSelector match: time-slicing makes GPU Feature
// Discovery rename nvidia.com/gpu.product to Tesla-T4-SHARED.
TEST(PlannerTest, SeedT4TimeSlicingRespectsTheProductRename) {
  const json seed = testing::loadDump("t4_timeslicing.json");
  // The Deployment pinned to `product`; with `bootstrap`, none of its pods could land yet (the node
  // is not shared, so not one pod runs and the Pending ones name the selector, not the resource).
  auto pinned = [&](const std::string& key, const std::string& product, bool bootstrap) {
    json dump = seed;
    json items = json::array();
    for (auto item : dump["items"]) {
      if (item["kind"] == "Deployment")
        item["spec"]["template"]["spec"]["nodeSelector"] = {{key, product}};
      if (bootstrap && item["kind"] == "Pod") {
        if (item["spec"].contains("nodeName")) continue;
        item["status"]["conditions"][0]["message"] =
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.";
      }
      items.push_back(item);
    }
    dump["items"] = items;
    return dump;
  };
  const std::string product = "nvidia.com/gpu.product";
  const json fourteen = json::parse(
      R"([{"kind": "TimeSlicing", "node": "t4-node-1", "resource": "nvidia.com/gpu", "replicas": 14}])");
  struct Row {
    const char* what;
    json dump;
    json actions;
    bool renameNote;
  };
  const std::vector<Row> rows{
      {"the seed: selected by nvidia.com/gpu.family, time-sliced to the policy's 14", seed,
       fourteen, false},
      {"pinned to Tesla-T4: a raise would strand new pods", pinned(product, "Tesla-T4", false),
       json::array(), true},
      {"pinned to Tesla-T4-SHARED: bootstrapped by the raise (maxReplicas is already the hard 14)",
       pinned(product, "Tesla-T4-SHARED", true), fourteen, false},
  };
  for (const auto& row : rows) {
    auto p = planFor(row.dump, testing::policiesFrom(testing::readDataFile("t4-policy.yaml")));
    EXPECT_EQ(actions(p->plan), row.actions) << row.what;
    ASSERT_EQ(p->plan.demands.size(), 1u) << row.what << ": the HPA counts as blocked";
    const bool noted = std::any_of(p->plan.notes.begin(), p->plan.notes.end(), [](const auto& n) {
      return n.find("rename nvidia.com/gpu.product to Tesla-T4-SHARED") != std::string::npos;
    });
    EXPECT_EQ(noted, row.renameNote) << row.what;
  }
}

TEST(PlannerTest, SeedAllBalancedRaisesTimeSlicingPerProfile) {
  auto p = planFor(testing::loadDump("a100_balanced_timeslicing.json"));
  EXPECT_EQ(json::parse(planToJson(p->plan).dump()), json::parse(R"({
    "demands": [
      {"namespace": "default", "name": "llm-medium", "resource": "nvidia.com/mig-2g.10gb", "ceiling": 2, "wanted": 4},
      {"namespace": "default", "name": "llm-small", "resource": "nvidia.com/mig-1g.5gb", "ceiling": 4, "wanted": 12}],
    "actions": [
      {"kind": "TimeSlicing", "node": "a100-node-2", "resource": "nvidia.com/mig-1g.5gb", "replicas": 4},
      {"kind": "TimeSlicing", "node": "a100-node-2", "resource": "nvidia.com/mig-2g.10gb", "replicas": 4},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "llm-medium", "from": 2, "to": 4},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "llm-small", "from": 4, "to": 8}],
    "capacityAfter": [
      {"namespace": "default", "name": "llm-large", "ceiling": 2},
      {"namespace": "default", "name": "llm-medium", "ceiling": 4},
      {"namespace": "default", "name": "llm-small", "ceiling": 8}]})"));
  ASSERT_EQ(p->plan.notes.size(), 1u)
      << "llm-small wants 12 but 4 replicas per device is the limit";
}

TEST(PlannerTest, IdleNodeIsReshapedFirstWithPerGpuConfig) {
  auto p = planFor(testing::loadDump("a100_idle_reshape.json"));
  json a = actions(p->plan);
  ASSERT_EQ(a.size(), 3u) << a.dump(2);
  EXPECT_EQ(a[0]["kind"], "MigReconfigure");
  EXPECT_EQ(a[0]["node"], "a100-node-3");
  EXPECT_EQ(a[0]["gpus"], json::parse(R"([{"index": 0, "from": {"3g.20gb": 2}, "to": {"1g.5gb": 7}},
                                          {"index": 1, "from": {"3g.20gb": 2}, "to": {"1g.5gb": 7}}])"));
  EXPECT_EQ(
      a[0]["config"]["entries"],
      json::parse(R"([{"devices": [0, 1], "mig-enabled": true, "mig-devices": {"1g.5gb": 7}}])"));
  EXPECT_LE(a[0]["config"]["name"].get<std::string>().size(), 63u);
  EXPECT_EQ(a[1], json::parse(R"({"kind": "TimeSlicing", "node": "a100-node-1",
                                  "resource": "nvidia.com/mig-1g.5gb", "replicas": 2})"));
  EXPECT_EQ(a[2]["to"], 28);
}

using testing::append;
using testing::blockedApp;
using testing::migCluster;

TEST(PlannerTest, ReshapeRemovesTheFewestInstances) {
  std::vector<json> items{
      testing::migNode("busy", "NVIDIA-A100-SXM4-40GB", 1, "all-2g.10gb", {{"2g.10gb", 3}}),
      testing::migNode("idle", "NVIDIA-A100-SXM4-40GB", 1, "all-balanced",
                       {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}})};
  append(items, blockedApp("app", "nvidia.com/mig-2g.10gb", "busy", 3, 1));
  auto p = planFor(
      migCluster(items),
      testing::policiesFrom("name: default\nhpaNamespaces: [default]\nmaxReplicas: {hard: 5}\n"));
  json a = actions(p->plan);
  ASSERT_EQ(a.size(), 2u) << a.dump(2);
  EXPECT_EQ(a[0]["kind"], "MigReconfigure");
  EXPECT_EQ(a[0]["gpus"][0]["to"], json::parse(R"({"1g.5gb": 3, "2g.10gb": 2})"))
      << "one more 2g (aim 5, ceiling 4): giving up the 3g removes one instance, the others remove "
         "two";
  EXPECT_EQ(a[1]["to"], 5);
}

TEST(PlannerTest, SingleStrategyNodeIsRebuiltUniformly) {
  auto node = testing::migNode("single", "NVIDIA-A100-SXM4-40GB-MIG-3g.20gb", 4, "all-3g.20gb", {},
                               {}, "", "single");
  node["status"]["allocatable"]["nvidia.com/gpu"] = "4";
  std::vector<json> items{node};
  append(items, blockedApp("app", "nvidia.com/gpu", "", 0, 6));
  auto p = planFor(migCluster(items));
  json a = actions(p->plan);
  ASSERT_EQ(a.size(), 2u) << a.dump(2);
  EXPECT_EQ(a[0]["gpus"].size(), 2u);
  EXPECT_EQ(a[0]["gpus"][1]["to"], json::parse(R"({"1g.5gb": 7})"));
  EXPECT_EQ(a[1], json::parse(R"({"kind": "SetMaxReplicas", "namespace": "default", "name": "app",
                                  "from": 6, "to": 14})"));
}

// The story under the single strategy: A100 all-1g.5gb, seven MIG devices advertised as
// nvidia.com/gpu, GFD product "<model>-MIG-1g.5gb"; pods ask nvidia.com/gpu: 1 and the HPA stops at
// 7. The only lever is time-slicing nvidia.com/gpu (all-1g.5gb is already the most instances), and
// it renames the product "<model>-MIG-1g.5gb-SHARED".
TEST(PlannerTest, SingleStrategyStoryTimeSlicesTheMigDevices) {
  const std::string product = "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb";
  const json raise = json::parse(R"([
      {"kind": "TimeSlicing", "node": "a100-single", "resource": "nvidia.com/gpu", "replicas": 2},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "triton", "from": 7, "to": 14}])");
  struct Row {
    const char* what;
    std::optional<std::string> pinned;  // the Deployment's nvidia.com/gpu.product
    int running;                        // of 7 pods; the others Pending, unmatched by the selector
    json actions;
  };
  const std::vector<Row> rows{
      {"no product pin: seven run, the HPA is at its ceiling", std::nullopt, 7, raise},
      {"pinned to the unshared spelling: a raise would strand new pods", product, 7, json::array()},
      {"pinned to the shared spelling: none runs until the raise renames the product (the factor "
       "applies to maxReplicas while no pod fits)",
       product + "-SHARED", 0, raise},
  };
  for (const auto& row : rows) {
    auto node = testing::migNode("a100-single", product, 1, "all-1g.5gb", {}, {}, "", "single");
    node["metadata"]["labels"]["nvidia.com/gpu.count"] = "7";
    node["metadata"]["labels"]["nvidia.com/gpu.memory"] = "5120";
    node["status"]["allocatable"]["nvidia.com/gpu"] = "7";
    std::vector<json> items{node};
    append(items,
           blockedApp("triton", "nvidia.com/gpu", "a100-single", row.running, 7 - row.running));
    for (auto& item : items) {
      if (row.pinned && item["kind"] == "Deployment")
        item["spec"]["template"]["spec"]["nodeSelector"] = {
            {"nvidia.com/gpu.product", *row.pinned}};
      if (item["kind"] == "Pod" && !item["spec"].contains("nodeName"))
        item["status"]["conditions"] = json::parse(R"([{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable",
            "message": "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."}])");
    }
    auto p = planFor(migCluster(items));
    EXPECT_EQ(actions(p->plan), row.actions) << row.what;
    const bool noted = std::any_of(p->plan.notes.begin(), p->plan.notes.end(), [&](const auto& n) {
      return n.find("to " + product + "-SHARED") != std::string::npos;
    });
    EXPECT_EQ(noted, row.actions.empty()) << row.what;
  }
}

// The A100 "busy" (all-1g.5gb) with its seven instances held by app's 7 pods, and app's HPA at
// its maxReplicas.
std::vector<json> busyA100WithApp() {
  std::vector<json> items{
      testing::migNode("busy", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}})};
  append(items, blockedApp("app", k1g, "busy", 7, 0));
  return items;
}

TEST(PlannerTest, PerPodMemoryBoundsTimeSlicing) {
  std::vector<json> items = busyA100WithApp();
  auto p = planFor(migCluster(items),
                   testing::policiesFrom(
                       "name: default\nhpaNamespaces: [default]\ntimeSlicing: {maxReplicas: 8, "
                       "perPodGpuMemory: 2Gi}\n"));
  json a = actions(p->plan);
  ASSERT_EQ(a.size(), 2u) << a.dump(2);
  EXPECT_EQ(a[0]["replicas"], 2) << "5 GB / 2 GiB per pod = 2 pods per 1g.5gb instance";
  EXPECT_EQ(a[1]["to"], 14);
}

TEST(PlannerTest, LeverOrderFollowsThePolicy) {
  std::vector<json> items{
      testing::migNode("a-busy", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}}),
      testing::migNode("b-idle", "NVIDIA-A100-SXM4-40GB", 1, "all-3g.20gb", {{"3g.20gb", 2}})};
  append(items, blockedApp("app", k1g, "a-busy", 7, 0));
  auto p =
      planFor(migCluster(items),
              testing::policiesFrom(
                  "name: default\nhpaNamespaces: [default]\nlevers: [timeSlicing, migReshape]\n"));
  json a = actions(p->plan);
  ASSERT_EQ(a.size(), 2u) << a.dump(2);
  EXPECT_EQ(a[0]["kind"], "TimeSlicing")
      << "time-slicing first, so the idle node keeps its 3g instances";
  EXPECT_EQ(a[0]["replicas"], 2) << "wanted 14 = 7 instances x 2";
}

TEST(PlannerTest, NodesOutsideTheSelectorOrInTransitionAreLeftAlone) {
  auto pending =
      testing::migNode("a-pending", "NVIDIA-A100-SXM4-40GB", 1, "all-3g.20gb", {{"3g.20gb", 2}});
  pending["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending";
  auto otherPool =
      testing::migNode("b-other", "NVIDIA-A100-SXM4-40GB", 1, "all-3g.20gb", {{"3g.20gb", 2}});
  otherPool["metadata"]["labels"]["pool"] = "batch";
  auto busy = testing::migNode("c-busy", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}});
  busy["metadata"]["labels"]["pool"] = "batch";
  std::vector<json> items{pending, otherPool, busy};
  append(items, blockedApp("app", k1g, "c-busy", 7, 0));
  auto p =
      planFor(migCluster(items),
              testing::policiesFrom(
                  "name: default\nhpaNamespaces: [default]\nnodeSelector: {pool: inference}\n"));
  EXPECT_TRUE(p->plan.actions.empty()) << planToJson(p->plan).dump(2);
  ASSERT_EQ(p->plan.demands.size(), 1u);
  EXPECT_EQ(p->plan.notes.size(), 1u);
}

TEST(PlannerTest, ScaleUpCooldownHoldsRecentlyChangedHpas) {
  std::vector<json> items = busyA100WithApp();
  auto p = planFor(
      migCluster(items),
      testing::policiesFrom("name: default\nhpaNamespaces: [default]\ncooldown: {scaleUp: 1m}\n"),
      {{"default", "app", at("2026-11-22T00:59:30Z"), std::nullopt}});
  EXPECT_TRUE(p->plan.actions.empty());
  EXPECT_EQ(p->plan.demands.size(), 1u);
}

// A node whose time-slicing gpuscale raised to 4 on 1g.5gb, and an HPA it grew from 7 to 28.
std::vector<json> grownCluster(int runningPods, const std::string& average) {
  auto node = testing::migNode("n1", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}},
                               {{"1g.5gb", 4}}, "gpuscale-n1-ts");
  std::vector<json> items{
      node,
      testing::configMap("gpu-operator", "device-plugin-configs",
                         {{"gpuscale-n1-ts",
                           "version: v1\nflags: {migStrategy: mixed}\nsharing:\n  timeSlicing:\n"
                           "    resources: [{name: nvidia.com/mig-1g.5gb, replicas: 4}]\n"}})};
  items.push_back(testing::deployment("default", "app", runningPods, k1g));
  for (int i = 0; i < runningPods; ++i)
    items.push_back(testing::gpuPod("default", "app", i, k1g, "n1"));
  auto spec = testing::hpaSpec(1, 28, runningPods, runningPods, average, "50", false);
  spec.lastScaleTime = "2026-11-22T00:30:00Z";
  items.push_back(testing::hpa("default", "app", spec));
  return items;
}

// What the reconciler recorded when it grew the HPA of grownCluster from 7.
std::vector<Recorded> grownRecord() { return {{"default", "app", at("2026-11-22T00:00:00Z"), 7}}; }

// Give-back of a burst's reshape (policy migGiveBack): the app's seven pods run on `busy`; `spare`
// was reshaped by gpuscale from all-3g.20gb to its config g1 (four 1g.5gb and a 3g.20gb) for the
// burst, and the HPA, grown from 7 to 11, now wants 7.
TEST(PlannerTest, GiveBackRestoresTheGeometryBeforeTheBurst) {
  const std::string g1 = ownedConfigName("spare", "burst");
  const std::string kBurstEntries =
      "    - devices: [0]\n      mig-enabled: true\n"
      "      mig-devices: {\"1g.5gb\": 4, \"3g.20gb\": 1}\n";
  struct Row {
    const char* what;
    const char* giveBack;
    std::string spareConfig;  // its nvidia.com/mig.config label now
    bool podOnSpare;
    json actions;
  };
  const json restored = json::parse(R"([
      {"kind": "MigReconfigure", "node": "spare",
       "gpus": [{"index": 0, "from": {"1g.5gb": 4, "3g.20gb": 1}, "to": {"3g.20gb": 2}}]},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "app", "from": 11, "to": 7}])");
  auto lowerTo = [](int to) {
    return json::array({{{"kind", "SetMaxReplicas"},
                         {"namespace", "default"},
                         {"name", "app"},
                         {"from", 11},
                         {"to", to}}});
  };
  const std::vector<Row> rows{
      {"restore: idle since the burst", "restore", g1, false, restored},
      {"keep: the geometry stays, so does the ceiling", "keep", g1, false, json::array()},
      {"restore, but the record names a config gpuscale does not own", "restore", "g1", false,
       json::array()},
      {"restore, but a pod holds a GPU of the node (maxReplicas follows the free slices)",
       "restore", g1, true, lowerTo(10)},
      {"restore, but an operator relabelled the node since (all-balanced: two 1g.5gb)", "restore",
       "all-balanced", false, lowerTo(9)},
  };
  for (const auto& row : rows) {
    auto spare = testing::migNode("spare", "NVIDIA-A100-SXM4-40GB", 1, row.spareConfig, {});
    spare["metadata"]["annotations"]["gpuscale.io/mig-restore"] =
        json{{"before", "all-3g.20gb"}, {"applied", row.spareConfig == "g1" ? "g1" : g1}}.dump();
    std::vector<json> items{
        testing::migNode("busy", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}}), spare,
        testing::configMap("gpu-operator", "gpuscale-mig-parted-config",
                           {{"config.yaml", "version: v1\nmig-configs:\n  g1:\n" + kBurstEntries +
                                                "  " + g1 + ":\n" + kBurstEntries}}),
        testing::deployment("default", "app", 7, k1g)};
    for (int i = 0; i < 7; ++i) items.push_back(testing::gpuPod("default", "app", i, k1g, "busy"));
    if (row.podOnSpare) items.push_back(testing::gpuPod("default", "other", 0, k1g, "spare"));
    items.push_back(
        testing::hpa("default", "app", testing::hpaSpec(1, 11, 7, 7, "10", "50", false)));
    auto p = planFor(migCluster(items),
                     testing::policiesFrom(
                         std::string("name: default\nhpaNamespaces: [default]\nmigGiveBack: ") +
                         row.giveBack + "\n"),
                     {{"default", "app", at("2026-11-22T00:00:00Z"), 7}});
    json a = actions(p->plan);
    for (auto& action : a) action.erase("config");  // the entries are perGpuEntries' business
    EXPECT_EQ(a, row.actions) << row.what << "\n" << planToJson(p->plan).dump(2);
  }
}

// What a tenant writes on its own HPA does not stand in for the reconciler's records: neither a
// last change long ago (to skip a cooldown) nor a huge original maxReplicas (so isolation never
// comes back) changes the plan.
TEST(PlannerTest, ForgedStateAnnotationsOnTheHpaChangeNothing) {
  std::vector<json> items = busyA100WithApp();
  items.back()["metadata"]["annotations"]["gpuscale.io/last-change"] = "2020-01-01T00:00:00Z";
  auto p = planFor(
      migCluster(items),
      testing::policiesFrom("name: default\nhpaNamespaces: [default]\ncooldown: {scaleUp: 1m}\n"),
      {{"default", "app", at("2026-11-22T00:59:30Z"), std::nullopt}});
  EXPECT_TRUE(p->plan.actions.empty()) << "the recorded change is 30 s old: the cooldown holds";

  auto grown = grownCluster(10, "50");
  grown.back()["metadata"]["annotations"]["gpuscale.io/original-max-replicas"] = "100000";
  auto shrink = planFor(migCluster(grown), defaultPolicies(),
                        {{"default", "app", at("2026-11-22T00:00:00Z"), 7}});
  ASSERT_EQ(actions(shrink->plan).size(), 2u) << planToJson(shrink->plan).dump(2);
  EXPECT_EQ(actions(shrink->plan)[1]["to"], 14) << "lowered as recorded, not held at 100000";

  auto unrecorded = planFor(migCluster(grownCluster(10, "50")));
  EXPECT_TRUE(unrecorded->plan.actions.empty())
      << "an original maxReplicas on the HPA alone gives nothing back";
}

TEST(PlannerTest, ScaleInRestoresIsolationAfterTheCooldown) {
  auto p = planFor(migCluster(grownCluster(10, "50")), defaultPolicies(), grownRecord());
  EXPECT_EQ(actions(p->plan), json::parse(R"([
      {"kind": "TimeSlicing", "node": "n1", "resource": "nvidia.com/mig-1g.5gb", "replicas": 2},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "app", "from": 28, "to": 14}])"))
      << "10 pods need 2 replicas on 7 instances; maxReplicas follows capacity";
}

TEST(PlannerTest, ScaleInNeverGoesBelowRunningPods) {
  auto p = planFor(migCluster(grownCluster(20, "5")), defaultPolicies(), grownRecord());
  json a = actions(p->plan);
  ASSERT_EQ(a.size(), 2u) << a.dump(2);
  EXPECT_EQ(a[0]["replicas"], 3)
      << "20 running pods need ceil(20/7) = 3 replicas although 2 are wanted";
  EXPECT_EQ(a[1]["to"], 21);
}

TEST(PlannerTest, ScaleInWaitsForTheCooldownSinceTheLastChange) {
  auto items = grownCluster(10, "50");
  auto p = planFor(migCluster(items), defaultPolicies(),
                   {{"default", "app", at("2026-11-22T00:55:00Z"), 7}});
  EXPECT_TRUE(p->plan.actions.empty()) << planToJson(p->plan).dump(2);
}

TEST(PlannerTest, ScaleInDoesNotWaitForTheHpaToSettle) {
  auto items = grownCluster(10, "50");
  items.back()["status"]["lastScaleTime"] = "2026-11-22T00:59:30Z";
  auto p = planFor(migCluster(items), defaultPolicies(), grownRecord());
  json a = actions(p->plan);
  ASSERT_EQ(a.size(), 2u) << "an HPA that just moved a replica still gets isolation back: "
                          << a.dump(2);
  EXPECT_EQ(a[1]["to"], 14);
}

// Deterministic pseudo-random clusters for the safety properties.
class Lcg {
 public:
  explicit Lcg(std::uint32_t seed) : state_(seed) {}
  int next(int bound) {
    state_ = state_ * 1664525u + 1013904223u;
    return static_cast<int>((state_ >> 8) % static_cast<std::uint32_t>(bound));
  }

 private:
  std::uint32_t state_;
};

json randomCluster(std::uint32_t seed) {
  Lcg rng(seed);
  const char* configs[] = {"all-1g.5gb", "all-balanced", "all-3g.20gb", "all-2g.10gb",
                           "all-7g.40gb"};
  const std::map<std::string, std::map<std::string, int>> perGpu{
      {"all-1g.5gb", {{"1g.5gb", 7}}},
      {"all-balanced", {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}},
      {"all-3g.20gb", {{"3g.20gb", 2}}},
      {"all-2g.10gb", {{"2g.10gb", 3}}},
      {"all-7g.40gb", {{"7g.40gb", 1}}}};
  const char* resources[] = {"nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb",
                             "nvidia.com/mig-3g.20gb"};
  std::vector<json> items;
  std::vector<std::string> names;
  for (int n = 0; n < 6; ++n) {
    std::string config = configs[rng.next(5)];
    int gpus = 1 + rng.next(4);
    std::map<std::string, int> counts;
    for (const auto& [profile, count] : perGpu.at(config)) counts[profile] = count * gpus;
    names.push_back("node-" + std::to_string(n));
    auto node = testing::migNode(names.back(), "NVIDIA-A100-SXM4-40GB", gpus, config, counts);
    if (rng.next(6) == 0) node["metadata"]["labels"]["nvidia.com/mig.config.state"] = "failed";
    items.push_back(node);
  }
  for (int a = 0; a < 4; ++a) {
    std::string resource = resources[rng.next(3)];
    std::string node = rng.next(3) == 0 ? "" : names[rng.next(6)];
    append(items,
           blockedApp("app" + std::to_string(a), resource, node, 1 + rng.next(3), rng.next(3)));
  }
  return migCluster(items);
}

TEST(PlannerTest, SafetyPropertiesOnGeneratedClusters) {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    auto p = planFor(randomCluster(seed));
    auto again = planPartitions(p->snapshot, p->workloads, kNow);
    EXPECT_EQ(planToJson(again).dump(), planToJson(p->plan).dump())
        << "seed " << seed << ": deterministic";
    for (const auto& action : p->plan.actions) {
      if (const auto* mig = std::get_if<MigReconfigure>(&action)) {
        const NodeState* node = p->snapshot.node(mig->node);
        ASSERT_NE(node, nullptr);
        EXPECT_FALSE(node->hasGpuPods)
            << "seed " << seed << ": reshaped " << mig->node << " with GPU pods";
        EXPECT_FALSE(node->inTransition)
            << "seed " << seed << ": reshaped " << mig->node << " mid-change";
        for (const auto& g : mig->gpus) {
          EXPECT_TRUE(isValidGeometry(*node->model, g.to))
              << "seed " << seed << ": " << formatGeometry(g.to);
        }
      } else if (const auto* ts = std::get_if<TimeSlicingChange>(&action)) {
        const NodeState* node = p->snapshot.node(ts->node);
        EXPECT_FALSE(node->inTransition) << "seed " << seed;
        EXPECT_GT(ts->replicas, ts->from)
            << "seed " << seed << ": only growth for blocked HPAs here";
        EXPECT_LE(ts->replicas, 4) << "seed " << seed << ": the default policy's per-device limit";
      } else if (const auto* max = std::get_if<SetMaxReplicas>(&action)) {
        EXPECT_GT(max->to, max->from) << "seed " << seed;
      }
    }
  }
}

}  // namespace planner_test
}  // namespace gpuscale::partition
