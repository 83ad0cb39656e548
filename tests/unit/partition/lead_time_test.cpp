#include "gpuscale/partition/lead_time.h"

#include <cmath>

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/demand.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace lead_time_test {

using std::chrono::seconds;

struct Sample {
  Lever lever;
  const char* node;
  double seconds;
};

struct Row {
  const char* what;
  std::vector<Lever> levers;
  std::vector<Sample> samples;
  std::vector<std::string> nodes;  // the HPA's eligible nodes
  double lead;
  const char* source;
};

TEST(LeadTimeTest, MeasuredTimesRaiseThePolicyFloorPerLeverAndNode) {
  const std::vector<Lever> both{Lever::kMigReshape, Lever::kTimeSlicing};
  const std::vector<Lever> slicing{Lever::kTimeSlicing};
  const Row rows[] = {
      {"nothing measured: the longest listed lever's policy value",
       both,
       {},
       {"a"},
       60,
       "policy leadTime"},
      {"nothing measured, time-slicing only", slicing, {}, {"a"}, 20, "policy leadTime"},
      {"a slower measurement raises the lead time",
       slicing,
       {{Lever::kTimeSlicing, "a", 35}},
       {"a"},
       35,
       "measured: timeSlicing on a took 35 s"},
      {"a faster measurement never lowers the floor",
       slicing,
       {{Lever::kTimeSlicing, "a", 4}},
       {"a"},
       20,
       "policy leadTime"},
      {"the longest recent measurement counts, not the last",
       slicing,
       {{Lever::kTimeSlicing, "a", 41}, {Lever::kTimeSlicing, "a", 25}},
       {"a"},
       41,
       "measured: timeSlicing on a took 41 s"},
      {"only the HPA's nodes count",
       slicing,
       {{Lever::kTimeSlicing, "b", 90}},
       {"a"},
       20,
       "policy leadTime"},
      {"the slowest of the HPA's nodes counts",
       slicing,
       {{Lever::kTimeSlicing, "a", 30}, {Lever::kTimeSlicing, "b", 45}},
       {"a", "b"},
       45,
       "measured: timeSlicing on b took 45 s"},
      {"only levers the policy lists count",
       slicing,
       {{Lever::kMigReshape, "a", 120}},
       {"a"},
       20,
       "policy leadTime"},
      {"a measured reshape beyond its floor wins over time-slicing",
       both,
       {{Lever::kMigReshape, "a", 75}, {Lever::kTimeSlicing, "a", 30}},
       {"a"},
       75,
       "measured: migReshape on a took 75 s"},
      {"negative and non-finite measurements are ignored",
       slicing,
       {{Lever::kTimeSlicing, "a", -5}, {Lever::kTimeSlicing, "a", NAN}},
       {"a"},
       20,
       "policy leadTime"},
  };
  for (const Row& r : rows) {
    Policy policy;
    policy.levers = r.levers;
    MeasuredLeadTimes measured;
    for (const Sample& s : r.samples) measured.record(s.lever, s.node, s.seconds);
    const LeadTime got = leadTimeFor(policy, r.nodes, measured);
    EXPECT_DOUBLE_EQ(got.seconds, r.lead) << r.what;
    EXPECT_EQ(got.source, r.source) << r.what;
  }
}

TEST(LeadTimeTest, KeepsOnlyTheMostRecentMeasurements) {
  MeasuredLeadTimes measured;
  measured.record(Lever::kTimeSlicing, "a", 100);  // a one-off slow run
  for (std::size_t i = 0; i < MeasuredLeadTimes::kKept; ++i) {
    measured.record(Lever::kTimeSlicing, "a", 30);
  }
  EXPECT_EQ(measured.recent(Lever::kTimeSlicing, "a").size(), MeasuredLeadTimes::kKept);
  Policy policy;
  policy.levers = {Lever::kTimeSlicing};
  EXPECT_DOUBLE_EQ(leadTimeFor(policy, {"a"}, measured).seconds, 30)
      << "the slow run fell out after kKept newer ones";
  EXPECT_TRUE(measured.recent(Lever::kMigReshape, "a").empty());
}

// An HPA at 6 of 7 slices whose formula rises one replica per 40 s reaches its ceiling in 40 s:
// beyond the policy's 20 s time-slicing lead time, within a measured 60 s on its node.
TEST(LeadTimeTest, AMeasuredSlowerLeverMakesAnticipationActEarlier) {
  const std::string r = "nvidia.com/mig-1g.5gb";
  std::vector<nlohmann::json> items{
      testing::defaultMigConfigMap(),
      testing::migNode("n1", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}}),
      testing::deployment("default", "web", 6, r)};
  for (int i = 0; i < 6; ++i) items.push_back(testing::gpuPod("default", "web", i, r, "n1"));
  auto spec = testing::hpaSpec(1, 7, 6, 6, "50", "50", false);
  spec.policy = "p";
  items.push_back(testing::hpa("default", "web", spec));
  ClusterSnapshot snapshot = testing::snapshotOf(testing::list(items));
  const TimePoint now = *core::parseRfc3339("2026-11-26T09:00:00Z");
  ASSERT_EQ(snapshot.hpas.size(), 1u);
  snapshot.hpas[0].history = {{now - seconds(80), 4, 4, 4}, {now - seconds(40), 5, 5, 5}};
  auto set = parsePolicies(
      "policies:\n- {name: p, hpas: [default/web], levers: [timeSlicing],"
      " anticipation: {leadTime: {timeSlicing: 20s}}}\n");
  ASSERT_TRUE(set.ok()) << set.status().toString();

  auto policyOnly = assessWorkloads(snapshot, *set, now);
  ASSERT_EQ(policyOnly.size(), 1u);
  ASSERT_TRUE(policyOnly[0].forecast);
  EXPECT_FALSE(policyOnly[0].blocked) << policyOnly[0].forecast->why;

  snapshot.measuredLeadTimes.record(Lever::kTimeSlicing, "n1", 60);
  auto measured = assessWorkloads(snapshot, *set, now);
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_TRUE(measured[0].blocked);
  EXPECT_EQ(measured[0].reason, BlockReason::kAnticipated);
  ASSERT_TRUE(measured[0].forecast);
  EXPECT_NE(measured[0].forecast->why.find("measured: timeSlicing on n1 took 60 s"),
            std::string::npos)
      << measured[0].forecast->why;
}

}  // namespace lead_time_test
}  // namespace gpuscale::partition
