#include "gpuscale/partition/workload_priority.h"

#include <gtest/gtest.h>

#include "gpuscale/partition/snapshot.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace {

struct Row {
  const char* what;
  std::optional<int> policyPriority;
  const char* className;  // of the pod template; "" = none; nullptr = no target
  PriorityClasses classes;
  int value;
  const char* source;
};

TEST(WorkloadPriorityTest, PolicyThenPriorityClassThenGlobalDefault) {
  const PriorityClasses classes{{{"gold", 1000}, {"base", 10}, {"low", -5}}, std::nullopt};
  const PriorityClasses withDefault{{{"gold", 1000}, {"base", 10}}, "base"};
  const Row rows[] = {
      {"the policy's priority wins over the class", 7, "gold", classes, 7, "policy p"},
      {"a policy priority of 0 is still the policy's", 0, "gold", classes, 0, "policy p"},
      {"no policy priority: the template's class", std::nullopt, "gold", classes, 1000,
       "PriorityClass gold"},
      {"negative class values count", std::nullopt, "low", classes, -5, "PriorityClass low"},
      {"a class that does not exist gives 0", std::nullopt, "platinum", classes, 0,
       "PriorityClass platinum (not found: 0)"},
      {"no class on the template: the global default", std::nullopt, "", withDefault, 10,
       "global default PriorityClass base"},
      {"the template's class wins over the global default", std::nullopt, "gold", withDefault, 1000,
       "PriorityClass gold"},
      {"no class and no default: 0", std::nullopt, "", classes, 0, "none (0)"},
      {"no target known: the global default", std::nullopt, nullptr, withDefault, 10,
       "global default PriorityClass base"},
      {"a default naming a missing class is ignored", std::nullopt, "", PriorityClasses{{}, "gone"},
       0, "none (0)"},
  };
  for (const Row& r : rows) {
    Policy policy;
    policy.name = "p";
    policy.priority = r.policyPriority;
    ScaleTarget target;
    if (r.className != nullptr) target.priorityClassName = r.className;
    const WorkloadPriority got =
        workloadPriority(policy, r.className != nullptr ? &target : nullptr, r.classes);
    EXPECT_EQ(got.value, r.value) << r.what;
    EXPECT_EQ(got.source, r.source) << r.what;
  }
}

nlohmann::json priorityClass(const std::string& name, int value, bool globalDefault) {
  nlohmann::json c = {{"apiVersion", "scheduling.k8s.io/v1"},
                      {"kind", "PriorityClass"},
                      {"metadata", {{"name", name}}},
                      {"value", value}};
  if (globalDefault) c["globalDefault"] = true;
  return c;
}

TEST(WorkloadPriorityTest, SnapshotReadsClassesAndTheTemplatesClass) {
  nlohmann::json dep = testing::deployment("default", "web", 1, "nvidia.com/gpu");
  dep["spec"]["template"]["spec"]["priorityClassName"] = "gold";
  const ClusterSnapshot snap = testing::snapshotOf(testing::list(
      {priorityClass("gold", 1000, false), priorityClass("base", 10, true),
       priorityClass("floor", 5, true), dep, testing::deployment("default", "batch", 1, "x")}));
  EXPECT_EQ(snap.priorityClasses.values,
            (std::map<std::string, int>{{"base", 10}, {"floor", 5}, {"gold", 1000}}));
  EXPECT_EQ(snap.priorityClasses.globalDefault, "floor")
      << "two defaults: the lower value, as admission picks";
  ASSERT_NE(snap.target("default", "Deployment", "web"), nullptr);
  EXPECT_EQ(snap.target("default", "Deployment", "web")->priorityClassName, "gold");
  EXPECT_EQ(snap.target("default", "Deployment", "batch")->priorityClassName, "");
}

}  // namespace
}  // namespace gpuscale::partition
