#include "gpuscale/partition/contention.h"

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace contention_test {

using testing::json;

struct Row {
  const char* what;
  std::vector<CapacityClaim> claims;
  int available;
  std::vector<int> granted;
};

class ShareTable : public ::testing::TestWithParam<Row> {};

TEST_P(ShareTable, SharesByPriorityThenEvenly) {
  const Row& r = GetParam();
  const auto grants = shareCapacity(r.claims, r.available);
  ASSERT_EQ(grants.size(), r.claims.size()) << r.what;
  for (std::size_t k = 0; k < grants.size(); ++k) {
    EXPECT_EQ(grants[k].granted, r.granted[k]) << r.what << " (claim " << k << ")";
    EXPECT_EQ(grants[k].granted + grants[k].shortfall, std::max(0, r.claims[k].need)) << r.what;
    EXPECT_FALSE(grants[k].why.empty()) << r.what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ShareTable,
    ::testing::Values(
        Row{"enough for everyone", {{"a", 0, 3}, {"b", 0, 4}}, 10, {3, 4}},
        Row{"nothing available", {{"a", 0, 3}, {"b", 0, 4}}, 0, {0, 0}},
        Row{"negative available is nothing", {{"a", 0, 3}}, -2, {0}},
        Row{"higher priority is served first", {{"low", 0, 5}, {"high", 10, 5}}, 6, {1, 5}},
        Row{"higher priority takes everything when short itself",
            {{"low", 0, 5}, {"high", 10, 9}},
            6,
            {0, 6}},
        Row{"equal priority: the shortfall is shared evenly",
            {{"a", 0, 4}, {"b", 0, 9}},
            7,
            {1, 6}},
        Row{"no claim gives up more than it asked for", {{"a", 0, 2}, {"b", 0, 10}}, 4, {0, 4}},
        Row{"an odd shortfall: later claims give up the last pod",
            {{"a", 0, 3}, {"b", 0, 3}},
            3,
            {2, 1}},
        Row{"three tiers", {{"c", 1, 4}, {"a", 5, 2}, {"b", 1, 4}, {"d", 0, 3}}, 6, {2, 2, 2, 0}},
        Row{"a promise comes first within its priority",
            {{"a", 0, 5}, {"b", 0, 4, true}},
            5,
            {1, 4}},
        Row{"a promise does not outrank a higher priority",
            {{"high", 10, 5}, {"b", 0, 4, true}},
            6,
            {5, 1}},
        Row{"groups of 2: the shortfall is given up in whole groups",
            {{"a", 0, 4, false, 2}, {"b", 0, 4, false, 2}},
            5,
            {2, 2}},
        Row{"a group claim beside a pod claim: the pod claim takes the odd pod",
            {{"a", 0, 4, false, 2}, {"b", 0, 4}},
            5,
            {2, 3}},
        Row{"a group of 3 gives up a whole group: the pods freed beyond the shortfall go back",
            {{"a", 0, 2}, {"g", 0, 6, false, 3}},
            6,
            {2, 3}},
        Row{"groups and a higher priority: the lower tier gets whole groups of what is left",
            {{"high", 10, 3}, {"g", 0, 6, false, 2}},
            6,
            {3, 2}},
        Row{"zero and negative needs get nothing",
            {{"a", 0, 0}, {"b", 0, -1}, {"c", 0, 2}},
            1,
            {0, 0, 1}}));

// Two HPAs whose pods use the same A100 (seven 1g.5gb instances, all held: gold 4 pods, silver 3)
// both want more; time-slicing x2 frees 7 pods' worth, less than the 4 + 9 they need.
// goldPriority: the gold policy's priority; nullopt: none, and gold's pods run with the priority
// admission resolved from their PriorityClass `gold-class` (spec.priority 10) instead.
std::unique_ptr<testing::Planned> contended(std::optional<int> goldPriority) {
  const std::string r = "nvidia.com/mig-1g.5gb";
  std::vector<json> items{
      testing::defaultMigConfigMap(),
      testing::migNode("n1", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}})};
  auto app = [&](const std::string& name, int running, const std::string& average) {
    items.push_back(testing::deployment("default", name, running, r));
    for (int i = 0; i < running; ++i) {
      items.push_back(testing::gpuPod("default", name, i, r, "n1"));
      if (name == "gold" && !goldPriority) {
        items.back()["spec"]["priorityClassName"] = "gold-class";
        items.back()["spec"]["priority"] = 10;
      }
    }
    auto spec = testing::hpaSpec(1, running, running, running, average, "50", true);
    spec.policy = name;
    items.push_back(testing::hpa("default", name, spec));
  };
  app("gold", 4, "100");    // wants 8: 4 more
  app("silver", 3, "200");  // wants 12: 9 more
  const std::string priority =
      goldPriority ? ", priority: " + std::to_string(*goldPriority) : std::string();
  const std::string policies =
      "policies:\n"
      "- {name: gold, hpas: [default/gold], levers: [timeSlicing], timeSlicing: {maxReplicas: 2}" +
      priority +
      "}\n"
      "- {name: silver, hpas: [default/silver], levers: [timeSlicing],"
      " timeSlicing: {maxReplicas: 2}}\n";
  return testing::planned(testing::list(items), testing::policiesFrom(policies),
                          *core::parseRfc3339("2026-11-26T09:00:00Z"));
}

TEST(ContentionTest, HigherPriorityGetsItsNeedTheOtherTheRest) {
  auto c = contended(10);
  EXPECT_EQ(testing::maxChangesOf(c->plan), json::parse(R"({"gold": 8, "silver": 6})"))
      << planToJson(c->plan).dump(2);
  ASSERT_EQ(c->plan.demands.size(), 2u);
  for (const auto& d : c->plan.demands) EXPECT_FALSE(d.explain.empty()) << d.name;
}

TEST(ContentionTest, WithoutAPolicyPriorityThePodsAdmittedPriorityDecides) {
  auto c = contended(std::nullopt);
  EXPECT_EQ(testing::maxChangesOf(c->plan), json::parse(R"({"gold": 8, "silver": 6})"))
      << "gold's pods run at priority 10, silver's at none (0); " << planToJson(c->plan).dump(2);
  for (const auto& d : c->plan.demands) {
    if (d.name == "gold") {
      EXPECT_NE(d.explain.find("(priority from pods' spec.priority (lowest of 4 pods))"),
                std::string::npos)
          << d.explain;
    }
  }
}

TEST(ContentionTest, EqualPrioritiesShareTheShortfallEvenly) {
  auto c = contended(0);
  EXPECT_EQ(testing::maxChangesOf(c->plan), json::parse(R"({"gold": 5, "silver": 9})"))
      << "13 wanted, 7 free: each gives up 3; " << planToJson(c->plan).dump(2);
}

TEST(ContentionTest, TheNodeIsTimeSlicedOnceForBoth) {
  auto c = contended(10);
  int timeSlicing = 0;
  const json all = json::parse(planToJson(c->plan).dump());
  for (const auto& a : all["actions"]) {
    if (a["kind"] == "TimeSlicing") {
      ++timeSlicing;
      EXPECT_EQ(a["replicas"], 2);
    }
  }
  EXPECT_EQ(timeSlicing, 1);
}

// The same A100 with two LeaderWorkerSets of groups of 2 pods (one 1g.5gb each): gold holds 2
// groups (4 pods), silver 1 (2 pods), one slice free; gold wants 6 groups, silver 4. Time-slicing
// x2 frees 8 pods, less than the 8 + 6 they need.
TEST(ContentionTest, GroupsAreSharedInWholeGroups) {
  const std::string r = "nvidia.com/mig-1g.5gb";
  std::vector<json> items{
      testing::defaultMigConfigMap(),
      testing::migNode("n1", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}})};
  auto app = [&](const std::string& name, int groups, const std::string& average) {
    const json pod{{"spec", {{"containers", json::array({testing::container(r, 1)})}}}};
    items.push_back({{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
                     {"kind", "LeaderWorkerSet"},
                     {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name}}},
                     {"spec",
                      {{"replicas", groups},
                       {"leaderWorkerTemplate", {{"size", 2}, {"workerTemplate", pod}}}}}});
    for (int i = 0; i < groups * 2; ++i) {
      items.push_back(testing::gpuPod("default", name, i, r, "n1"));
      items.back()["metadata"]["labels"] = {{"leaderworkerset.sigs.k8s.io/name", name}};
    }
    auto spec = testing::hpaSpec(1, groups, groups, groups, average, "50", true);
    spec.policy = name;
    json h = testing::hpa("default", name, spec);
    h["spec"]["scaleTargetRef"] = {
        {"apiVersion", "leaderworkerset.x-k8s.io/v1"}, {"kind", "LeaderWorkerSet"}, {"name", name}};
    items.push_back(h);
  };
  app("gold", 2, "150");    // wants 6 groups: 4 more, 8 pods
  app("silver", 1, "200");  // wants 4 groups: 3 more, 6 pods
  const std::string policies =
      "policies:\n"
      "- {name: gold, hpas: [default/gold], levers: [timeSlicing], timeSlicing: {maxReplicas: 2}}\n"
      "- {name: silver, hpas: [default/silver], levers: [timeSlicing],"
      " timeSlicing: {maxReplicas: 2}}\n";
  auto c = testing::planned(testing::list(items), testing::policiesFrom(policies),
                            *core::parseRfc3339("2026-11-26T09:00:00Z"));
  // 14 pods wanted, 8 free: an even loss of 3 pods is 2 groups each; the 2 pods that frees go
  // back to gold (earlier in name order): gold +3 groups, silver +1, all 14 slices used.
  EXPECT_EQ(testing::maxChangesOf(c->plan), json::parse(R"({"gold": 5, "silver": 2})"))
      << planToJson(c->plan).dump(2);
}

TEST(ContentionTest, WorkloadsOnSeparateNodesAreSeparateGroups) {
  auto c = contended(0);
  EXPECT_EQ(contentionGroups(c->workloads).size(), 1u) << "both on n1";
  std::vector<WorkloadDemand> apart = c->workloads;
  apart[0].eligibleNodes = {0};
  apart[1].eligibleNodes = {1};
  EXPECT_EQ(contentionGroups(apart).size(), 2u);
}

}  // namespace contention_test
}  // namespace gpuscale::partition
