// Tenants on shared GPUs (gpu_tenancy.h): the rule alone, then what the planner makes of it.
// Sharing (time-slicing, MPS) is raised on a node's resource only when every pod placed there
// holding it belongs to a namespace the policy lets share a GPU with the blocked HPA's.
#include "gpuscale/partition/gpu_tenancy.h"

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace gpu_tenancy_test {

using testing::json;
using testing::k1g;
using testing::k3g;
using testing::kA100;
using testing::kNow;

Policy sharingPolicy(std::vector<std::string> across) {
  Policy p;
  p.name = "p";
  p.shareAcrossNamespaces = std::move(across);
  return p;
}

TEST(GpuTenancyTest, WhoMayShareAGpu) {
  struct Row {
    const char* what;
    std::vector<std::string> across;
    const char* a;
    const char* b;
    bool may;
  };
  const Row rows[] = {
      {"a namespace with itself, by default", {}, "team-a", "team-a", true},
      {"two namespaces, by default: no", {}, "team-a", "team-b", false},
      {"both listed", {"team-a", "team-b"}, "team-a", "team-b", true},
      {"both listed, either order", {"team-a", "team-b"}, "team-b", "team-a", true},
      {"only one of them listed", {"team-a", "team-c"}, "team-a", "team-b", false},
      {"\"*\": any namespace with any", {"*"}, "team-a", "team-b", true},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(mayShareGpu(sharingPolicy(r.across), r.a, r.b), r.may) << r.what;
  }
}

TEST(GpuTenancyTest, TheTenantsOfANodeAreThoseHoldingTheResource) {
  std::vector<json> items{testing::migNode("n1", kA100, 1, "all-balanced",
                                           {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}})};
  items.push_back(testing::gpuPod("team-a", "app", 0, k1g, "n1"));
  items.push_back(testing::gpuPod("team-b", "web", 0, k3g, "n1"));
  items.push_back(testing::gpuPod("team-c", "old", 0, k1g, "n1"));
  items.back()["status"]["phase"] = "Succeeded";
  items.push_back(testing::gpuPod("team-d", "batch", 0, k1g + ".shared", "n1"));
  items.push_back(testing::gpuPod("team-e", "queued", 0, k1g, ""));
  const ClusterSnapshot snap = testing::snapshotOf(testing::migCluster(items));
  const NodeState& n = *snap.node("n1");
  EXPECT_EQ(n.gpuTenants.at(k1g), (std::set<std::string>{"team-a", "team-d"}))
      << "finished and unbound pods hold nothing; a shared name counts for its resource";
  EXPECT_EQ(n.gpuTenants.at(k3g), (std::set<std::string>{"team-b"}));
  EXPECT_EQ(otherGpuTenant(n, k1g, "team-a", sharingPolicy({})), "team-d");
  EXPECT_EQ(otherGpuTenant(n, k1g, "team-a", sharingPolicy({"team-a", "team-d"})), "");
  EXPECT_EQ(otherGpuTenant(n, k3g, "team-b", sharingPolicy({})), "");
  EXPECT_EQ(otherGpuTenant(n, "nvidia.com/gpu", "team-a", sharingPolicy({})), "");
}

// The planner, table-driven: team-a's HPA `app` is held at its ceiling on node n1 and only the
// timeSlicing lever (or MPS) may grow it; who else holds what on n1 decides whether it may.
struct Other {
  std::string ns;
  std::string resource;
  std::string phase = "Running";  // "" = Pending, not bound
};

struct Row {
  const char* what;
  std::vector<Other> others;
  std::string sharing;  // the policy's `sharing:` block, "" = none
  bool shared;          // the plan raises sharing on n1
};

std::vector<json> cluster(const std::vector<Other>& others, bool t4) {
  const std::string r = t4 ? "nvidia.com/gpu" : k1g;
  std::vector<json> items;
  if (t4) {
    items.push_back(testing::gpuNode("n1",
                                     {{"nvidia.com/gpu.product", "Tesla-T4"},
                                      {"nvidia.com/gpu.count", "2"},
                                      {"nvidia.com/gpu.memory", "15360"},
                                      {"nvidia.com/mig.capable", "false"}},
                                     {{"nvidia.com/gpu", "2"}}));
  } else {
    items.push_back(testing::migNode("n1", kA100, 1, "all-balanced",
                                     {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}));
  }
  // team-a's app: two pods running, on every device of the resource n1 has, wanting 8
  // (maxReplicas 2, limited): only sharing can grow it.
  items.push_back(testing::deployment("team-a", "app", 2, r));
  items.push_back(testing::gpuPod("team-a", "app", 0, r, "n1"));
  items.push_back(testing::gpuPod("team-a", "app", 1, r, "n1"));
  items.push_back(testing::hpa("team-a", "app", testing::hpaSpec(1, 2, 2, 2, "200", "50", true)));
  int i = 0;
  for (const auto& o : others) {
    items.push_back(testing::gpuPod(o.ns, "other", i++, o.resource.empty() ? r : o.resource,
                                    o.phase.empty() ? "" : "n1"));
    if (!o.phase.empty()) items.back()["status"]["phase"] = o.phase;
  }
  return items;
}

Plan planOf(const std::vector<json>& items, const std::string& levers, const std::string& extra) {
  auto policies =
      parsePolicies("name: default\nhpaNamespaces: [team-a]\nlevers: [" + levers + "]\n" + extra);
  EXPECT_TRUE(policies.ok()) << policies.status().toString();
  const ClusterSnapshot snap = testing::snapshotOf(testing::migCluster(items));
  return planPartitions(snap, assessWorkloads(snap, *policies), kNow);
}

bool sharesN1(const Plan& plan) {
  return std::any_of(plan.actions.begin(), plan.actions.end(), [](const PlanAction& a) {
    const auto* t = std::get_if<TimeSlicingChange>(&a);
    return t != nullptr && t->node == "n1" && t->replicas > t->from;
  });
}

bool saysOtherTenant(const Plan& plan) {
  for (const auto& why : plan.why) {
    for (const auto& r : why.reasons) {
      if (r.code == WhyCode::kOtherTenant && r.node == "n1") return true;
    }
  }
  return false;
}

TEST(GpuTenancyTest, SharingIsRaisedOnlyAmongTenantsThePolicyLetsShare) {
  const Row rows[] = {
      {"only the HPA's own namespace on the node", {}, "", true},
      {"another pod of the same namespace", {{"team-a", ""}}, "", true},
      {"team-b holds a 1g.5gb slice there: no time-slicing", {{"team-b", ""}}, "", false},
      {"team-b holds another profile (its devices are not shared)", {{"team-b", k3g}}, "", true},
      {"team-b's pod finished", {{"team-b", "", "Succeeded"}}, "", true},
      {"team-b's pod is pending, not placed", {{"team-b", "", ""}}, "", true},
      {"the policy lets team-a and team-b share",
       {{"team-b", ""}},
       "sharing: {acrossNamespaces: [team-a, team-b]}\n",
       true},
      {"the policy lets team-a and team-c share, not team-b",
       {{"team-b", ""}},
       "sharing: {acrossNamespaces: [team-a, team-c]}\n",
       false},
      {"the policy lets any namespace share",
       {{"team-b", ""}},
       "sharing: {acrossNamespaces: [\"*\"]}\n",
       true},
  };
  for (const auto& row : rows) {
    const Plan plan = planOf(cluster(row.others, false), "timeSlicing", row.sharing);
    EXPECT_EQ(sharesN1(plan), row.shared) << row.what << "\n" << planToJson(plan).dump(2);
    EXPECT_EQ(saysOtherTenant(plan), !row.shared) << row.what;
  }
}

TEST(GpuTenancyTest, MpsFollowsTheSameRule) {
  const std::string mps = "mps: {maxReplicas: 4, changeBusyNodes: true}\n";
  const Plan alone = planOf(cluster({}, true), "mps", mps);
  EXPECT_TRUE(sharesN1(alone)) << planToJson(alone).dump(2);
  const Plan beside = planOf(cluster({{"team-b", ""}}, true), "mps", mps);
  EXPECT_FALSE(sharesN1(beside)) << planToJson(beside).dump(2);
  EXPECT_TRUE(saysOtherTenant(beside));
  const Plan allowed = planOf(cluster({{"team-b", ""}}, true), "mps",
                              mps + "sharing: {acrossNamespaces: [\"*\"]}\n");
  EXPECT_TRUE(sharesN1(allowed)) << planToJson(allowed).dump(2);
}

}  // namespace gpu_tenancy_test
}  // namespace gpuscale::partition
