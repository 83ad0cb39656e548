#include "gpuscale/partition/policy.h"

#include <gtest/gtest.h>

#include "kube_objects.h"

namespace gpuscale::partition {
namespace {

TEST(PolicyTest, ParsesEveryField) {
  auto set = parsePolicies(R"(policies:
- name: inference
  hpas: [default/triton]
  levers: [timeSlicing, migReshape]
  migProfiles: [1g.5gb, 2g.10gb]
  timeSlicing: {maxReplicas: 8, perPodGpuMemory: 4Gi}
  nodeSelector: {pool: gpu}
  maxReplicas: {hard: 28}
  cooldown: {scaleUp: 1m, scaleDown: 1h30m}
  tolerance: 0.05
- name: batch
  maxReplicas: {factor: 2}
)");
  ASSERT_TRUE(set.ok()) << set.status().toString();
  ASSERT_EQ(set->policies.size(), 2u);
  const Policy& p = set->policies[0];
  EXPECT_EQ(p.levers, (std::vector<Lever>{Lever::kTimeSlicing, Lever::kMigReshape}));
  EXPECT_EQ(p.migProfiles, (std::set<std::string>{"1g.5gb", "2g.10gb"}));
  EXPECT_EQ(p.maxTimeSlicingReplicas, 8);
  EXPECT_DOUBLE_EQ(*p.perPodGpuMemoryBytes, 4.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(p.scaleUpCooldown, std::chrono::seconds(60));
  EXPECT_EQ(p.scaleDownCooldown, std::chrono::seconds(5400));
  EXPECT_DOUBLE_EQ(p.tolerance, 0.05);
  EXPECT_EQ(p.hardMaxFor(7), 28);
  EXPECT_EQ(set->policies[1].hardMaxFor(7), 14);
  EXPECT_TRUE(p.selectsNode({{"pool", "gpu"}, {"zone", "a"}}));
  EXPECT_FALSE(p.selectsNode({{"pool", "cpu"}}));
}

TEST(PolicyTest, SinglePolicyFileAndDefaults) {
  auto set = parsePolicies("name: solo\n");
  ASSERT_TRUE(set.ok()) << set.status().toString();
  const Policy& p = set->policies.at(0);
  EXPECT_EQ(p.levers, (std::vector<Lever>{Lever::kMigReshape, Lever::kTimeSlicing}));
  EXPECT_EQ(p.maxTimeSlicingReplicas, 4);
  EXPECT_EQ(p.hardMaxFor(7), 28);
}

TEST(PolicyTest, BuiltInDefaultMatchesTheIssue) {
  PolicySet set = defaultPolicies();
  ASSERT_EQ(set.policies.size(), 1u);
  const Policy& p = set.policies[0];
  EXPECT_EQ(p.name, "default");
  EXPECT_EQ(p.levers.front(), Lever::kMigReshape) << "MIG reshape of idle GPUs first";
  EXPECT_EQ(p.maxTimeSlicingReplicas, 4);
  EXPECT_EQ(p.hardMaxFor(7), 28) << "hard max = 4 x current partitions";
  EXPECT_TRUE(p.nodeSelector.empty());
}

TEST(PolicyTest, ChoosesPolicyByAnnotationThenList) {
  auto set = parsePolicies("policies:\n- name: a\n  hpas: [ns/listed]\n- name: b\n");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->forHpa("ns", "x", {{"gpuscale.io/partition-policy", "b"}})->name, "b");
  EXPECT_EQ(set->forHpa("ns", "listed", {})->name, "a");
  EXPECT_EQ(set->forHpa("ns", "x", {}), nullptr);
  EXPECT_EQ(set->forHpa("ns", "x", {{"gpuscale.io/partition-policy", "zzz"}}), nullptr);
}

struct ErrorCase {
  const char* what;
  const char* yaml;
  const char* fragment;
};

TEST(PolicyTest, RejectsBadPolicies) {
  const ErrorCase cases[] = {
      {"unknown field", "name: a\nlevers: [timeSlicing]\ncolour: red\n", "line 3, column 1"},
      {"unknown lever", "name: a\nlevers: [magic]\n", "migReshape or timeSlicing"},
      {"lever twice", "name: a\nlevers: [timeSlicing, timeSlicing]\n", "twice"},
      {"missing name", "levers: [timeSlicing]\n", "needs a name"},
      {"duplicate names", "policies:\n- name: a\n- name: a\n", "defined twice"},
      {"zero hard max", "name: a\nmaxReplicas: {hard: 0}\n", "at least 1"},
      {"bad memory", "name: a\ntimeSlicing: {perPodGpuMemory: lots}\n", "perPodGpuMemory"},
      {"bad duration", "name: a\ncooldown: {scaleUp: soon}\n", "duration"},
      {"bad hpa reference", "name: a\nhpas: [triton]\n", "namespace/name"},
      {"tolerance out of range", "name: a\ntolerance: 2\n", "tolerance"},
      {"not a mapping", "- a\n", "mapping"},
      {"broken YAML", "name: [a\n", "line"},
  };
  for (const auto& c : cases) {
    auto r = parsePolicies(c.yaml);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_NE(r.status().message().find(c.fragment), std::string::npos)
        << c.what << ": " << r.status().message();
  }
}

TEST(PolicyTest, SeedPolicyFileParses) {
  auto set = parsePolicies(testing::readDataFile("t4-policy.yaml"));
  ASSERT_TRUE(set.ok()) << set.status().toString();
  EXPECT_EQ(set->policies.at(0).name, "t4-inference");
}

}  // namespace
}  // namespace gpuscale::partition
