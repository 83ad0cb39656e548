// DRA in the snapshot (dra_capacity.h): each node's model, what a DRA node offers, and what one pod
// of a claim-based workload takes; then one planner pass over a mixed cluster.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dra_objects.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/dra_capacity.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/planner.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/partition/why_not.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace dra_snapshot_test {

using nlohmann::json;

const std::string k1g = "nvidia.com/mig-1g.5gb", k3g = "nvidia.com/mig-3g.20gb",
                  kGpu = "nvidia.com/gpu";

TEST(DraSnapshotTest, EachNodeFollowsOneModel) {
  const ClusterSnapshot snap = testing::snapshotOf(testing::draMixedCluster());
  EXPECT_TRUE(snap.skipped.empty());
  struct Row {
    const char* node;
    CapacityModel model;
    ResourceCounts allocatable;  // nvidia.com/ only
    ResourceCounts used;
  };
  const std::vector<Row> rows{
      {"dp-a100", CapacityModel::kDevicePlugin, {{k1g, 7}}, {{k1g, 7}}},
      {"dra-idle", CapacityModel::kDraStatic, {{k3g, 2}}, {}},
      {"dra-part", CapacityModel::kDraPartitionable, {{kGpu, 1}, {k1g, 0}}, {{kGpu, 1}}},
      {"dra-static", CapacityModel::kDraStatic, {{k1g, 7}}, {{k1g, 7}}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.node);
    const NodeState* n = snap.node(row.node);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->capacityModel, row.model);
    EXPECT_EQ(n->dra(), row.model != CapacityModel::kDevicePlugin);
    EXPECT_EQ(n->draPool != nullptr, n->dra());
    EXPECT_EQ(n->allocatable, row.allocatable);
    EXPECT_EQ(n->used, row.used);
    EXPECT_TRUE(n->sharedReplicas.empty());
  }
  // A static DRA node's devices are its MIG geometry's (what a reshape changes).
  EXPECT_EQ(snap.node("dra-idle")->devices, (ResourceCounts{{k3g, 2}}));
}

TEST(DraSnapshotTest, AClaimBasedWorkloadAsksForTheKindItsClaimsSelect) {
  const ClusterSnapshot snap = testing::snapshotOf(testing::draMixedCluster());
  const ScaleTarget* claims = snap.target("default", "Deployment", "claims-app");
  ASSERT_NE(claims, nullptr);
  EXPECT_TRUE(claims->draClaims);
  EXPECT_EQ(claims->draProblem, "");
  EXPECT_EQ(claims->gpuRequests, (ResourceCounts{{k1g, 1}}));
  const ScaleTarget* plugin = snap.target("default", "Deployment", "plugin-app");
  ASSERT_NE(plugin, nullptr);
  EXPECT_FALSE(plugin->draClaims);
  // The claims' pods: the device each was allocated, or unschedulable for the workload's kind.
  for (const auto& pod : snap.pods) {
    if (pod.labels.at("app") != "claims-app") continue;
    SCOPED_TRACE(pod.name);
    if (pod.nodeName.empty()) {
      EXPECT_TRUE(pod.claimsUnallocatable);
      EXPECT_EQ(pod.insufficientResource, k1g);
    } else {
      EXPECT_EQ(pod.gpuRequests, (ResourceCounts{{k1g, 1}}));
    }
  }
}

// What the planner cannot count is a reason on the workload, never a guess.
TEST(DraSnapshotTest, ClaimsThePlannerCannotCountSayWhy) {
  struct Row {
    const char* what;
    json tmpl;
    std::string problem;  // a fragment
  };
  json firstAvailable = testing::draClaimTemplate("default", "one-slice", "mig.nvidia.com");
  json& request = firstAvailable["spec"]["spec"]["devices"]["requests"][0];
  request["firstAvailable"] = json::array({request["exactly"]});
  request["firstAvailable"][0]["name"] = "a";
  request.erase("exactly");
  const std::vector<Row> rows{
      {"a selector outside the CEL subset",
       testing::draClaimTemplate("default", "one-slice", "mig.nvidia.com", 1,
                                 {"device.attributes['gpu.nvidia.com'].exists(a, true)"}),
       "is not in the subset of CEL"},
      {"an unknown DeviceClass", testing::draClaimTemplate("default", "one-slice", "nope"),
       "DeviceClass nope does not exist"},
      {"firstAvailable", firstAvailable, "firstAvailable"},
      {"nothing matches",
       testing::draClaimTemplate("default", "one-slice", "mig.nvidia.com", 1,
                                 {"device.attributes['gpu.nvidia.com'].profile == 'x'"}),
       "no device"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    json dump = testing::draMixedCluster();
    for (auto& item : dump["items"]) {
      if (item["kind"] == "ResourceClaimTemplate") item = row.tmpl;
    }
    const ClusterSnapshot snap = testing::snapshotOf(dump);
    const ScaleTarget* claims = snap.target("default", "Deployment", "claims-app");
    ASSERT_NE(claims, nullptr);
    EXPECT_FALSE(claims->draClaims);
    EXPECT_TRUE(claims->gpuRequests.empty());
    EXPECT_NE(claims->draProblem.find(row.problem), std::string::npos) << claims->draProblem;
  }
}

// One pass over the mixed cluster: each workload is planned on the nodes of its model only; a
// static DRA node is reshaped through mig-manager (the driver republishes its devices), a
// partitionable one never, and no DRA node is time-sliced.
TEST(DraSnapshotTest, AMixedClusterIsPlannedInOnePass) {
  const ClusterSnapshot snap = testing::snapshotOf(testing::draMixedCluster());
  auto policies = parsePolicies(
      "policies:\n- name: default\n  hpaNamespaces: ['*']\n"
      "  levers: [migReshape, timeSlicing]\n");
  ASSERT_TRUE(policies.ok()) << policies.status().toString();
  const auto workloads = assessWorkloads(snap, *policies);
  ASSERT_EQ(workloads.size(), 2u);
  for (const auto& w : workloads) {
    SCOPED_TRACE(w.name);
    EXPECT_TRUE(w.blocked);
    for (std::size_t i : w.eligibleNodes) {
      EXPECT_EQ(snap.nodes[i].dra(), w.name == "claims-app") << snap.nodes[i].name;
    }
  }
  const Plan plan = planPartitions(snap, workloads, *core::parseRfc3339("2026-11-22T01:00:00Z"));
  std::vector<std::string> reshaped, timeSliced;
  for (const auto& a : plan.actions) {
    if (const auto* m = std::get_if<MigReconfigure>(&a)) reshaped.push_back(m->node);
    if (const auto* t = std::get_if<TimeSlicingChange>(&a)) timeSliced.push_back(t->node);
  }
  EXPECT_EQ(reshaped, std::vector<std::string>{"dra-idle"});
  for (const auto& node : timeSliced) EXPECT_EQ(node.rfind("dra-", 0), std::string::npos) << node;
  for (const auto& why : plan.why) {
    SCOPED_TRACE(whyToText(why));
    for (const auto& r : why.reasons) {
      if (r.node.empty()) continue;
      EXPECT_EQ(r.node.rfind("dra-", 0) == 0, why.name == "claims-app") << r.node;
      if (r.node == "dra-part" && r.lever == Lever::kMigReshape) {
        EXPECT_EQ(r.code, WhyCode::kDraPartitionable);
      }
      if (r.node.rfind("dra-", 0) == 0 && r.lever == Lever::kTimeSlicing) {
        EXPECT_EQ(r.code, WhyCode::kDraNoSharing);
      }
    }
  }
}

}  // namespace dra_snapshot_test
}  // namespace gpuscale::partition
