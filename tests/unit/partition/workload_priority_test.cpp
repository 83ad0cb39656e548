#include "gpuscale/partition/workload_priority.h"

#include <gtest/gtest.h>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/snapshot.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace workload_priority_test {

// A pod of the target: its spec.priority (nullopt: none), and whether it still counts.
struct PodRow {
  std::optional<int> priority;
  std::string phase = "Running";
  bool terminating = false;
};

struct Row {
  const char* what;
  std::optional<int> policyPriority;
  std::vector<PodRow> pods;
  int value;
  const char* source;
};

TEST(WorkloadPriorityTest, PolicyThenThePodsAdmittedPriority) {
  const Row rows[] = {
      {"the policy's priority wins over the pods'", 7, {{1000}}, 7, "policy p"},
      {"a policy priority of 0 is still the policy's", 0, {{1000}}, 0, "policy p"},
      {"no policy priority: the pods' spec.priority",
       std::nullopt,
       {{1000}, {1000}},
       1000,
       "pods' spec.priority (lowest of 2 pods)"},
      {"the lowest pod counts (a rollout to a higher class is not done)",
       std::nullopt,
       {{1000}, {10}, {1000}},
       10,
       "pods' spec.priority (lowest of 3 pods)"},
      {"negative priorities count",
       std::nullopt,
       {{-5}},
       -5,
       "pods' spec.priority (lowest of 1 pod)"},
      {"a pod without spec.priority counts as 0, as the scheduler counts it",
       std::nullopt,
       {{1000}, {std::nullopt}},
       0,
       "pods' spec.priority (lowest of 2 pods)"},
      {"finished and terminating pods do not count",
       std::nullopt,
       {{1000}, {5, "Succeeded"}, {5, "Failed"}, {5, "Running", true}},
       1000,
       "pods' spec.priority (lowest of 1 pod)"},
      {"no pods yet: 0", std::nullopt, {}, 0, "no pods yet (0)"},
  };
  for (const Row& r : rows) {
    Policy policy;
    policy.name = "p";
    policy.priority = r.policyPriority;
    std::vector<PodState> pods;
    for (const auto& p : r.pods) {
      PodState pod;
      pod.priority = p.priority;
      pod.phase = p.phase;
      pod.terminating = p.terminating;
      pods.push_back(pod);
    }
    std::vector<const PodState*> ptrs;
    for (const auto& p : pods) ptrs.push_back(&p);
    const WorkloadPriority got = workloadPriority(policy, ptrs);
    EXPECT_EQ(got.value, r.value) << r.what;
    EXPECT_EQ(got.source, r.source) << r.what;
  }
}

// A tenant names a high PriorityClass in the pod template: that is text no admission checked, and
// it counts for nothing. What admission gave the running pods counts.
TEST(WorkloadPriorityTest, ATemplatesClassNameCountsForNothing) {
  const std::string r = "nvidia.com/mig-1g.5gb";
  nlohmann::json dep = testing::deployment("default", "app", 2, r);
  dep["spec"]["template"]["spec"]["priorityClassName"] = "system-cluster-critical";
  std::vector<nlohmann::json> items{
      testing::migNode("n1", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}}), dep,
      testing::hpa("default", "app", testing::hpaSpec(1, 2, 2, 2, "100", "50", true))};
  for (int i = 0; i < 2; ++i) {
    items.push_back(testing::gpuPod("default", "app", i, r, "n1"));
    items.back()["spec"]["priorityClassName"] = "team-low";
    items.back()["spec"]["priority"] = 100;
  }
  const ClusterSnapshot snap = testing::snapshotOf(testing::migCluster(items));
  EXPECT_EQ(snap.pods.front().priority, 100);
  const auto workloads = assessWorkloads(snap, defaultPolicies());
  ASSERT_EQ(workloads.size(), 1u);
  EXPECT_EQ(workloads.front().priority.value, 100);
  EXPECT_EQ(workloads.front().priority.source, "pods' spec.priority (lowest of 2 pods)");
}

}  // namespace workload_priority_test
}  // namespace gpuscale::partition
