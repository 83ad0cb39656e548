// The planner and MIG mode (policy migModeChange): enabling MIG on an idle whole GPU for a blocked
// workload, the reasons when it does not, and switching MIG off again on give-back.
#include <functional>

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace planner_mig_mode_test {

using testing::actionsWithoutConfig;
using testing::append;
using testing::json;
using testing::k1g;
using testing::kA100;
using testing::kNow;

// A MIG-capable node of one A100 running unpartitioned (MIG disabled): one whole nvidia.com/gpu.
json wholeGpuNode(const std::string& name) {
  auto node = testing::migNode(name, kA100, 1, "all-disabled", {});
  node["status"]["allocatable"]["nvidia.com/gpu"] = "1";
  return node;
}

PolicySet policy(bool modeChange, const std::string& extra = "") {
  return testing::policiesFrom(std::string("name: default\nhpaNamespaces: [default]\n") +
                               "maxReplicas: {hard: 14}\nmigModeChange: {enable: " +
                               (modeChange ? "true" : "false") + "}\n" + extra);
}

// `adjust` stands for what a caller with a per-GPU mapping or a state store adds to the snapshot.
std::unique_ptr<testing::Planned> plan(const std::vector<json>& items, PolicySet policies,
                                       const std::function<void(ClusterSnapshot&)>& adjust = {}) {
  return testing::planned(testing::migCluster(items), std::move(policies), kNow, adjust);
}

bool hasReason(const Plan& plan, WhyCode code, const std::string& node) {
  for (const auto& why : plan.why) {
    for (const auto& r : why.reasons) {
      if (r.code == code && r.node == node) return true;
    }
  }
  return false;
}

const json kSetMax = json::parse(
    R"({"kind": "SetMaxReplicas", "namespace": "default", "name": "app", "from": 7, "to": 14})");
const json kEnableOff = json::parse(R"({"kind": "MigReconfigure", "node": "off",
    "gpus": [{"index": 0, "from": {}, "to": {"1g.5gb": 7},
              "migEnabled": {"from": false, "to": true}}]})");
const json kTimeSliceBusy = json::parse(R"({"kind": "TimeSlicing", "node": "busy",
    "resource": "nvidia.com/mig-1g.5gb", "replicas": 2})");

// The app's seven pods fill GPU `busy`'s seven 1g.5gb slices and its HPA wants 14 (the policy's
// cap); node `off` holds one A100 with MIG disabled.
TEST(PlannerMigModeTest, EnablesMigOnAnIdleWholeGpuOnlyWhenAllowed) {
  struct Row {
    const char* what;
    bool modeChange;
    std::function<void(std::vector<json>&)> add;
    json actions;
    std::optional<std::pair<WhyCode, std::string>> reason;
  };
  const std::vector<Row> rows{
      {"allowed: MIG on with the geometry the pods need, instead of time-slicing the busy GPU",
       true,
       {},
       json::array({kEnableOff, kSetMax}),
       std::pair{WhyCode::kReshaped, std::string("off")}},
      {"not allowed (the default): time-slicing, and explain names the idle GPU",
       false,
       {},
       json::array({kTimeSliceBusy, kSetMax}),
       std::pair{WhyCode::kMigModeOff, std::string("off")}},
      {"allowed, but a pod holds the whole GPU: the node stays as it is", true,
       [](std::vector<json>& items) {
         items.push_back(testing::gpuPod("default", "other", 0, "nvidia.com/gpu", "off"));
       },
       json::array({kTimeSliceBusy, kSetMax}), std::nullopt},
      {"allowed, but an idle MIG-enabled GPU covers the need: a geometry change comes first", true,
       [](std::vector<json>& items) {
         items.push_back(testing::migNode("zz-mig", kA100, 1, "all-3g.20gb", {{"3g.20gb", 2}}));
       },
       json::array({json::parse(R"({"kind": "MigReconfigure", "node": "zz-mig",
            "gpus": [{"index": 0, "from": {"3g.20gb": 2}, "to": {"1g.5gb": 7}}]})"),
                    kSetMax}),
       std::nullopt},
      {"allowed, but the node is mid-change (mig.config.state pending)", true,
       [](std::vector<json>& items) {
         for (auto& item : items) {
           if (item["kind"] == "Node" && item["metadata"]["name"] == "off")
             item["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending";
         }
       },
       json::array({kTimeSliceBusy, kSetMax}), std::nullopt},
  };
  for (const auto& row : rows) {
    std::vector<json> items{testing::migNode("busy", kA100, 1, "all-1g.5gb", {{"1g.5gb", 7}}),
                            wholeGpuNode("off")};
    append(items, testing::blockedApp("app", k1g, "busy", 7, 0));
    if (row.add) row.add(items);
    auto p = plan(items, policy(row.modeChange));
    EXPECT_EQ(actionsWithoutConfig(p->plan), row.actions) << row.what << "\n"
                                                          << planToJson(p->plan).dump(2);
    if (row.reason) {
      EXPECT_TRUE(hasReason(p->plan, row.reason->first, row.reason->second)) << row.what;
    }
  }
}

TEST(PlannerMigModeTest, TheConfigEnablesMigOnThatGpuAndTheTextSaysItResets) {
  std::vector<json> items{testing::migNode("busy", kA100, 1, "all-1g.5gb", {{"1g.5gb", 7}}),
                          wholeGpuNode("off")};
  append(items, testing::blockedApp("app", k1g, "busy", 7, 0));
  auto p = plan(items, policy(true));
  ASSERT_FALSE(p->plan.actions.empty());
  const auto* mig = std::get_if<MigReconfigure>(&p->plan.actions.front());
  ASSERT_NE(mig, nullptr);
  EXPECT_TRUE(mig->switchesMigMode());
  EXPECT_TRUE(isOwnedConfigOf(mig->configName, "off"));
  ASSERT_EQ(mig->entries.size(), 1u);
  EXPECT_EQ(mig->entries[0].devices, std::vector<int>{0});
  EXPECT_TRUE(mig->entries[0].migEnabled);
  EXPECT_EQ(mig->entries[0].migDevices, (MigGeometry{{"1g.5gb", 7}}));
  const std::string text = actionToText(p->plan.actions.front());
  EXPECT_NE(text.find("MIG disabled -> 1g.5gb"), std::string::npos) << text;
  EXPECT_NE(text.find("every GPU resets"), std::string::npos) << text;
}

// Node `pair`: GPU 0 all-1g.5gb holds the app's pods, GPU 1 runs unpartitioned and the per-GPU
// mapping shows it idle. A mode change would reset GPU 0 as well, so it never happens there.
TEST(PlannerMigModeTest, NeverOnANodeWhoseOtherGpusHoldPods) {
  const std::string config =
      "version: v1\nmig-configs:\n  half:\n    - devices: [0]\n      mig-enabled: true\n"
      "      mig-devices: {\"1g.5gb\": 7}\n    - devices: [1]\n      mig-enabled: false\n";
  for (bool modeChange : {true, false}) {
    auto node = testing::migNode("pair", kA100, 2, "half", {{"1g.5gb", 7}});
    node["status"]["allocatable"]["nvidia.com/gpu"] = "1";
    std::vector<json> items{node, testing::configMap("gpu-operator", "gpuscale-mig-parted-config",
                                                     {{"config.yaml", config}})};
    append(items, testing::blockedApp("app", k1g, "pair", 7, 0));
    auto p = plan(items, policy(modeChange), [](ClusterSnapshot& s) {
      NodeState& n = s.nodes.at(0);
      ASSERT_EQ(n.gpus.size(), 2u);
      n.gpuMapped = true;
      n.gpus[0].busy = true;
      n.gpus[1].busy = false;
    });
    const json a = actionsWithoutConfig(p->plan);
    ASSERT_FALSE(a.empty()) << modeChange;
    EXPECT_EQ(a[0]["kind"], "TimeSlicing") << modeChange << "\n" << a.dump(2);
    EXPECT_TRUE(
        hasReason(p->plan, modeChange ? WhyCode::kMigModeBusyNode : WhyCode::kMigModeOff, "pair"))
        << modeChange;
  }
}

// Give-back (migGiveBack: restore): `off` ran unpartitioned before gpuscale enabled MIG for the
// burst; now idle, it goes back to MIG disabled only when mode changes are allowed.
TEST(PlannerMigModeTest, GiveBackDisablesMigAgainOnlyWhenAllowed) {
  const std::string g1 = ownedConfigName("off", "burst");
  const std::string entries =
      "    - devices: [0]\n      mig-enabled: true\n      mig-devices: {\"1g.5gb\": 7}\n";
  const json restored =
      json::array({json::parse(R"({"kind": "MigReconfigure", "node": "off",
          "gpus": [{"index": 0, "from": {"1g.5gb": 7}, "to": {},
                    "migEnabled": {"from": true, "to": false}}]})"),
                   json::parse(R"({"kind": "SetMaxReplicas", "namespace": "default", "name": "app",
                       "from": 14, "to": 7})")});
  for (bool modeChange : {true, false}) {
    auto off = testing::migNode("off", kA100, 1, g1, {{"1g.5gb", 7}});
    off["metadata"]["annotations"]["gpuscale.io/mig-restore"] =
        json{{"before", "all-disabled"}, {"applied", g1}}.dump();
    std::vector<json> items{testing::migNode("busy", kA100, 1, "all-1g.5gb", {{"1g.5gb", 7}}), off,
                            testing::configMap("gpu-operator", "gpuscale-mig-parted-config",
                                               {{"config.yaml", "version: v1\nmig-configs:\n  " +
                                                                    g1 + ":\n" + entries}}),
                            testing::deployment("default", "app", 7, k1g)};
    for (int i = 0; i < 7; ++i) items.push_back(testing::gpuPod("default", "app", i, k1g, "busy"));
    items.push_back(
        testing::hpa("default", "app", testing::hpaSpec(1, 14, 7, 7, "10", "50", false)));
    auto p = plan(items, policy(modeChange, "migGiveBack: restore\n"), [](ClusterSnapshot& s) {
      for (auto& h : s.hpas) {
        h.lastChange = *core::parseRfc3339("2026-11-22T00:00:00Z");
        h.originalMaxReplicas = 7;
      }
    });
    EXPECT_EQ(actionsWithoutConfig(p->plan), modeChange ? restored : json::array())
        << modeChange << "\n"
        << planToJson(p->plan).dump(2);
  }
}

}  // namespace planner_mig_mode_test
}  // namespace gpuscale::partition
