// The planner's MPS lever (policy `levers: [..., mps]`): which nodes it shares, how far, and how it
// gives the replicas back.
#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace planner_mps_test {

using testing::json;
using testing::k1g;
using testing::kNow;

const std::string kGpu = "nvidia.com/gpu";

// A node with one 15 GiB T4 and no MIG; `replicas` > 1 shares it as `mode` ("mps" or
// "time-slicing") through the device-plugin config `config`.
json t4Node(const std::string& name, int replicas = 1, const std::string& mode = "",
            const std::string& config = "") {
  std::map<std::string, std::string> labels{{"nvidia.com/gpu.product", "Tesla-T4"},
                                            {"nvidia.com/gpu.count", "1"},
                                            {"nvidia.com/gpu.memory", "15360"},
                                            {"nvidia.com/mig.capable", "false"}};
  if (replicas > 1) {
    labels["nvidia.com/gpu.product"] = "Tesla-T4-SHARED";
    labels["nvidia.com/gpu.replicas"] = std::to_string(replicas);
    labels["nvidia.com/gpu.sharing-strategy"] = mode;
  }
  if (!config.empty()) labels["nvidia.com/device-plugin.config"] = config;
  return testing::gpuNode(name, labels, {{kGpu, std::to_string(replicas)}});
}

json pluginConfigs(std::map<std::string, std::string> data) {
  return testing::configMap("gpu-operator", "device-plugin-configs", std::move(data));
}

// HPA `app` blocked at its ceiling: `running` pods on `node`, `pending` unschedulable ones.
std::vector<json> blockedApp(const std::string& resource, const std::string& node, int running,
                             int pending) {
  std::vector<json> items{testing::deployment("default", "app", running + pending, resource)};
  for (int i = 0; i < running; ++i)
    items.push_back(testing::gpuPod("default", "app", i, resource, node));
  for (int i = 0; i < pending; ++i)
    items.push_back(testing::gpuPod("default", "app", running + i, resource, ""));
  const int n = running + pending;
  items.push_back(testing::hpa("default", "app", testing::hpaSpec(1, n, n, n, "100", "50", true)));
  return items;
}

std::unique_ptr<testing::Planned> planFor(std::vector<json> items, const std::string& policyYaml,
                                          std::optional<TimePoint> lastChange = std::nullopt,
                                          std::optional<int> originalMax = std::nullopt) {
  items.push_back(testing::defaultMigConfigMap());
  return testing::planned(testing::list(std::move(items)), testing::policiesFrom(policyYaml), kNow,
                          [&](ClusterSnapshot& snapshot) {
                            for (auto& h : snapshot.hpas) {
                              h.lastChange = lastChange;
                              h.originalMaxReplicas = originalMax;
                            }
                          });
}

json actions(const Plan& plan) { return json::parse(planToJson(plan).dump())["actions"]; }

bool noted(const Plan& plan, const std::string& text) {
  return std::any_of(plan.notes.begin(), plan.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

std::string policy(const std::string& levers, const std::string& mps) {
  return "name: default\nhpaNamespaces: [default]\nlevers: [" + levers + "]\nmps: {" + mps + "}\n";
}

json mpsAction(const std::string& node, int replicas) {
  return {{"kind", "Mps"}, {"node", node}, {"resource", kGpu}, {"replicas", replicas}};
}

TEST(PlannerMpsTest, SharesWholeGpusWithinTheLimits) {
  // One pod runs on t4-a, three more are pending; t4-b is idle. Wanted 4, ceiling 2: need 2.
  auto twoT4s = [] {
    std::vector<json> items{t4Node("t4-a"), t4Node("t4-b")};
    for (auto& j : blockedApp(kGpu, "t4-a", 1, 3)) items.push_back(std::move(j));
    return items;
  };
  struct Row {
    const char* what;
    std::string policy;
    json actions;
    std::string note;  // a note the plan must carry, if any
  };
  const std::vector<Row> rows{
      {"by default only the idle node changes (a change restarts the MPS daemon)",
       policy("mps", "maxReplicas: 4"), json::array({mpsAction("t4-b", 3)}),
       "not using MPS on t4-a: GPU pods run there"},
      {"changeBusyNodes lets the busy node share first (node order)",
       policy("mps", "maxReplicas: 4, changeBusyNodes: true"), json::array({mpsAction("t4-a", 3)}),
       ""},
      {"6 GiB per pod: 15 GiB / 3 = 5 GiB is too little, so two replicas per T4",
       policy("mps", "maxReplicas: 8, perPodGpuMemory: 6Gi, changeBusyNodes: true"),
       json::array({mpsAction("t4-a", 2), mpsAction("t4-b", 2)}), ""},
      {"the memory need falls back to timeSlicing.perPodGpuMemory",
       policy("mps", "changeBusyNodes: true") + "timeSlicing: {perPodGpuMemory: 8Gi}\n",
       json::array(), "aims at 4 pods"},
      {"the policy's maxReplicas caps it", policy("mps", "maxReplicas: 2"),
       json::array({mpsAction("t4-b", 2)}), "aims at 4 pods"},
      {"time-slicing is still the default lever", "name: default\nhpaNamespaces: [default]\n",
       json::array(
           {{{"kind", "TimeSlicing"}, {"node", "t4-a"}, {"resource", kGpu}, {"replicas", 3}}}),
       ""},
  };
  for (const auto& row : rows) {
    auto p = planFor(twoT4s(), row.policy);
    EXPECT_EQ(actions(p->plan), row.actions) << row.what << "\n" << planToJson(p->plan).dump(2);
    EXPECT_TRUE(row.note.empty() || noted(p->plan, row.note)) << row.what << ": " << row.note;
  }
}

TEST(PlannerMpsTest, NeverMixesWithTimeSlicingOrMig) {
  auto a100 = testing::migNode("a100", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}});
  const std::string tsConfig =
      "version: v1\nsharing:\n  timeSlicing:\n    resources: "
      "[{name: nvidia.com/gpu, replicas: 2}]\n";
  const std::string mpsConfig =
      "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n";
  struct Row {
    const char* what;
    std::vector<json> items;
    std::string policy;
    json actions;
    std::string note;
  };
  auto with = [](std::vector<json> nodes, std::vector<json> app) {
    for (auto& j : app) nodes.push_back(std::move(j));
    return nodes;
  };
  const std::vector<Row> rows{
      {"a MIG resource is never MPS-shared", with({a100}, blockedApp(k1g, "a100", 7, 0)),
       policy("mps", ""), json::array(), "not using MPS on a100: MPS shares only nvidia.com/gpu"},
      {"so a preference list falls back to time-slicing there",
       with({a100}, blockedApp(k1g, "a100", 7, 0)), policy("mps, timeSlicing", ""),
       json::array({{{"kind", "TimeSlicing"}, {"node", "a100"}, {"resource", k1g}, {"replicas", 2}},
                    {{"kind", "SetMaxReplicas"},
                     {"namespace", "default"},
                     {"name", "app"},
                     {"from", 7},
                     {"to", 14}}}),
       ""},
      {"a time-sliced node is not switched to MPS",
       with({t4Node("t4-a", 2, "time-slicing", "ts-2"), pluginConfigs({{"ts-2", tsConfig}})},
            blockedApp(kGpu, "t4-a", 2, 2)),
       policy("mps", "changeBusyNodes: true"), json::array(), "the node is time-sliced"},
      {"an MPS node is raised with MPS",
       with({t4Node("t4-a", 2, "mps", "mps-2"), pluginConfigs({{"mps-2", mpsConfig}})},
            blockedApp(kGpu, "t4-a", 2, 2)),
       policy("mps, timeSlicing", "changeBusyNodes: true"), json::array({mpsAction("t4-a", 4)}),
       ""},
      {"and never time-sliced",
       with({t4Node("t4-a", 2, "mps", "mps-2"), pluginConfigs({{"mps-2", mpsConfig}})},
            blockedApp(kGpu, "t4-a", 2, 2)),
       "name: default\nhpaNamespaces: [default]\nlevers: [timeSlicing]\n", json::array(), ""},
  };
  for (const auto& row : rows) {
    auto p = planFor(row.items, row.policy);
    EXPECT_EQ(actions(p->plan), row.actions) << row.what << "\n" << planToJson(p->plan).dump(2);
    EXPECT_TRUE(row.note.empty() || noted(p->plan, row.note)) << row.what << ": " << row.note;
  }
}

TEST(PlannerMpsTest, GiveBackLowersMpsReplicas) {
  // gpuscale raised t4-a to 4 MPS replicas and the HPA from 1 to 4; two pods run and two are
  // wanted, an hour after the change.
  const std::string owned = "gpuscale-t4-a-mps";
  std::vector<json> items{t4Node("t4-a", 4, "mps", owned),
                          pluginConfigs({{owned,
                                          "version: v1\nsharing:\n  mps:\n    resources: "
                                          "[{name: nvidia.com/gpu, replicas: 4}]\n"}}),
                          testing::deployment("default", "app", 2, kGpu)};
  for (int i = 0; i < 2; ++i) items.push_back(testing::gpuPod("default", "app", i, kGpu, "t4-a"));
  items.push_back(testing::hpa("default", "app", testing::hpaSpec(1, 4, 2, 2, "50", "50", false)));
  auto p = planFor(items, policy("mps", ""), *core::parseRfc3339("2026-11-22T00:00:00Z"), 1);
  EXPECT_EQ(actions(p->plan), json::parse(R"([
      {"kind": "Mps", "node": "t4-a", "resource": "nvidia.com/gpu", "replicas": 2},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "app", "from": 4, "to": 2}])"))
      << planToJson(p->plan).dump(2);
  EXPECT_NE(planToText(p->plan).find("MPS-share nvidia.com/gpu on node t4-a: 4 -> 2 replicas"),
            std::string::npos)
      << planToText(p->plan);
}

}  // namespace planner_mps_test
}  // namespace gpuscale::partition
