#include "gpuscale/partition/lever_choice.h"

#include <functional>

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace lever_choice_test {

using testing::json;
using testing::k1g;
using testing::kNow;
using testing::policiesFrom;

TEST(LeverChoiceTest, WaitsForGpuMapping) {
  const Policy both =
      policiesFrom("name: p\nhpaNamespaces: [default]\nnodeSelector: {pool: gpu}\n").policies.at(0);
  const Policy sliceOnly = policiesFrom(
                               "name: p\nhpaNamespaces: [default]\nnodeSelector: {pool: gpu}\n"
                               "levers: [timeSlicing]\n")
                               .policies.at(0);
  auto node = [](std::function<void(NodeState&)> change) {
    NodeState n;
    n.labels = {{"pool", "gpu"}};
    n.migStrategy = MigStrategy::kMixed;
    n.gpuMappingSettling = true;
    n.migConfigState = "success";
    change(n);
    return n;
  };
  struct Row {
    const char* what;
    NodeState node;
    const Policy* policy;
    bool waits;
  };
  const Row rows[] = {
      {"settling, reshape allowed", node([](NodeState&) {}), &both, true},
      {"the mapping is settled", node([](NodeState& n) { n.gpuMappingSettling = false; }), &both,
       false},
      {"the policy cannot reshape: nothing to wait for", node([](NodeState&) {}), &sliceOnly,
       false},
      {"a MIG change is in flight", node([](NodeState& n) { n.inTransition = true; }), &both,
       false},
      {"single strategy: a reshape rebuilds every GPU anyway",
       node([](NodeState& n) { n.migStrategy = MigStrategy::kSingle; }), &both, false},
      {"outside the policy's nodeSelector", node([](NodeState& n) { n.labels["pool"] = "cpu"; }),
       &both, false},
      {"no mig-manager reports the node's MIG state: never reshaped",
       node([](NodeState& n) { n.migConfigState.clear(); }), &both, false},
  };
  for (const auto& row : rows)
    EXPECT_EQ(waitsForGpuMapping(row.node, *row.policy), row.waits) << row.what;
}

TEST(LeverChoiceTest, SaturatedForTimeSlicing) {
  const Policy policy = policiesFrom("name: p\nhpaNamespaces: [default]\n").policies.at(0);
  struct Row {
    const char* what;
    std::map<std::string, double, std::less<>> utilization;
    bool saturated;
  };
  const Row rows[] = {
      {"unknown utilisation", {}, false},
      {"below the default 0.8", {{k1g, 0.5}}, false},
      {"at the threshold", {{k1g, 0.8}}, true},
      {"above it", {{k1g, 0.93}}, true},
      {"another resource is busy, not this one", {{"nvidia.com/mig-3g.20gb", 0.99}}, false},
  };
  for (const auto& row : rows) {
    NodeState n;
    n.utilization = row.utilization;
    EXPECT_EQ(saturatedForTimeSlicing(n, k1g, policy), row.saturated) << row.what;
  }
}

// One mixed-strategy node with two A100s: GPU 0 all 1g.5gb holding the app's seven pods, GPU 1
// two 3g.20gb slices too big for the app (idle). The HPA is held at 14 with seven pods Pending;
// its metric at 6x the target makes it want 42, capped at the policy's 4 x 7 = 28.
// `justReshaped`: GPU 1 already has seven free 1g.5gb slices (a reshape just finished) and the
// HPA's seven new pods have not landed yet.
json busyAndIdleNode(bool justReshaped = false) {
  const std::string gpu1 = justReshaped ? R"({"1g.5gb": 7})" : R"({"3g.20gb": 2})";
  const std::string config = R"(version: v1
mig-configs:
  busy-and-idle:
  - devices: [0]
    mig-enabled: true
    mig-devices: {"1g.5gb": 7}
  - devices: [1]
    mig-enabled: true
    mig-devices: )" + gpu1 + "\n";
  const std::map<std::string, int> counts =
      justReshaped ? std::map<std::string, int>{{"1g.5gb", 14}}
                   : std::map<std::string, int>{{"1g.5gb", 7}, {"3g.20gb", 2}};
  std::vector<json> items{
      testing::configMap("gpu-operator", "n-mig-config", {{"config.yaml", config}}),
      testing::migNode("n", "NVIDIA-A100-SXM4-40GB", 2, "busy-and-idle", counts),
      testing::deployment("default", "app", 14, k1g)};
  for (int i = 0; i < (justReshaped ? 7 : 14); ++i)
    items.push_back(testing::gpuPod("default", "app", i, k1g, i < 7 ? "n" : ""));
  items.push_back(
      testing::hpa("default", "app", testing::hpaSpec(1, 14, 14, 14, "300", "50", true)));
  return testing::list(items);
}

// What a caller with a per-GPU mapping records, applied to the snapshot before planning.
struct Mapping {
  bool gpu1Idle = false;  // the mapping answered: GPU 1 holds no pod
  bool settling = false;
  std::optional<double> utilization;  // of the node's 1g.5gb devices
};

TEST(LeverChoiceTest, PlannerPrefersAReshapeOverTimeSlicingSaturatedDevices) {
  const std::string both = "name: default\nhpaNamespaces: [default]\n";
  const std::string sliceFirst = both + "levers: [timeSlicing, migReshape]\n";
  const std::string sliceOnly = both + "levers: [timeSlicing]\n";
  struct Row {
    const char* what;
    Mapping mapping;
    std::string policy;
    std::vector<std::string> actions;  // kind[:replicas|:to]
    std::string note;                  // a note that must be in the plan ("" none required)
    bool justReshaped = false;
  };
  const std::vector<Row> rows{
      {"GPU 1 known idle, devices not saturated: reshape, then time-slice the rest",
       {true, false, 0.4},
       both,
       {"MigReconfigure", "TimeSlicing:2", "SetMaxReplicas:28"},
       ""},
      {"GPU 1 known idle, devices saturated: the reshape alone (ceiling 14, maxReplicas already "
       "14)",
       {true, false, 0.9},
       both,
       {"MigReconfigure"},
       "devices are saturated (utilisation 90%)"},
      {"time-slicing listed first, saturated: the reshape still comes first",
       {true, false, 0.9},
       sliceFirst,
       {"MigReconfigure"},
       ""},
      {"time-slicing listed first, not saturated: the policy's order",
       {true, false, 0.4},
       sliceFirst,
       {"TimeSlicing:4", "SetMaxReplicas:28"},
       ""},
      {"no per-GPU answer (all busy), saturated: time-slicing is the last resort",
       {false, false, 0.9},
       both,
       {"TimeSlicing:4", "SetMaxReplicas:28"},
       ""},
      {"utilisation unknown, all busy: as without metrics",
       {false, false, std::nullopt},
       both,
       {"TimeSlicing:4", "SetMaxReplicas:28"},
       ""},
      {"the mapping is settling: no lever yet",
       {false, true, 0.9},
       both,
       {},
       "waiting for the per-GPU mapping of n to settle"},
      {"just reshaped, the new slices still free, saturated: no time-slicing yet",
       {true, false, 0.9},
       both,
       {},
       "the pods have not filled it yet",
       true},
      {"just reshaped, not saturated: time-slicing as before (aim 42 of 4 x 14)",
       {true, false, 0.4},
       both,
       {"TimeSlicing:3", "SetMaxReplicas:42"},
       "",
       true},
      {"settling, but the policy cannot reshape: time-slice now",
       {false, true, 0.9},
       sliceOnly,
       {"TimeSlicing:4", "SetMaxReplicas:28"},
       ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    ClusterSnapshot snap = testing::snapshotOf(busyAndIdleNode(row.justReshaped));
    ASSERT_EQ(snap.nodes.size(), 1u);
    NodeState& n = snap.nodes[0];
    ASSERT_TRUE(n.geometryKnown);
    ASSERT_EQ(n.gpus.size(), 2u);
    n.gpus[1].busy = !row.mapping.gpu1Idle;
    n.gpuMappingSettling = row.mapping.settling;
    if (row.mapping.utilization) n.utilization[k1g] = *row.mapping.utilization;
    const PolicySet policies = policiesFrom(row.policy);
    const auto workloads = assessWorkloads(snap, policies);
    ASSERT_EQ(workloads.size(), 1u);
    ASSERT_TRUE(workloads[0].blocked);
    const Plan plan = planPartitions(snap, workloads, kNow);
    std::vector<std::string> got;
    const json planned = json::parse(planToJson(plan).dump());
    for (const auto& a : planned["actions"]) {
      std::string kind = a["kind"];
      if (a.contains("replicas")) kind += ":" + std::to_string(a["replicas"].get<int>());
      if (kind == "SetMaxReplicas") kind += ":" + std::to_string(a["to"].get<int>());
      if (kind == "MigReconfigure") {
        EXPECT_EQ(a["gpus"], json::parse(R"([{"index": 1, "from": {"3g.20gb": 2},
                                              "to": {"1g.5gb": 7}}])"))
            << "only the idle GPU changes";
      }
      got.push_back(kind);
    }
    EXPECT_EQ(got, row.actions);
    if (!row.note.empty()) {
      const bool noted = std::any_of(plan.notes.begin(), plan.notes.end(), [&](const auto& s) {
        return s.find(row.note) != std::string::npos;
      });
      EXPECT_TRUE(noted) << ::testing::PrintToString(plan.notes);
      // The same verdict as a reason `explain` shows.
      const WhyCode code = row.note.find("waiting") != std::string::npos
                               ? WhyCode::kWaitingForMapping
                               : WhyCode::kSaturated;
      ASSERT_EQ(plan.why.size(), 1u);
      EXPECT_TRUE(plan.why[0].has(code)) << whyToText(plan.why[0]);
    }
  }
}

}  // namespace lever_choice_test
}  // namespace gpuscale::partition
