#include "gpuscale/partition/ceiling_forecast.h"

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace ceiling_forecast_test {

const TimePoint kNow = *core::parseRfc3339("2026-11-26T09:00:00Z");

// wanted replicas observed every 15 s, the last one now.
std::vector<HpaObservation> every15s(const std::vector<int>& wanted) {
  std::vector<HpaObservation> out;
  const auto n = static_cast<int>(wanted.size());
  for (int k = 0; k < n; ++k) {
    const int w = wanted[static_cast<std::size_t>(k)];
    out.push_back(
        {kNow - std::chrono::seconds(15 * (n - 1 - k)), std::min(w, 7), std::min(w, 7), w});
  }
  return out;
}

struct Row {
  const char* what;
  std::vector<int> wanted;  // older first; the last is this pass
  int maxReplicas;
  double leadSeconds;
  bool reaches;
  double eta;     // -1: not checked
  int predicted;  // 0: not checked
};

class ForecastTable : public ::testing::TestWithParam<Row> {};

TEST_P(ForecastTable, PredictsTheCeiling) {
  const Row& r = GetParam();
  auto obs = every15s(r.wanted);
  const HpaObservation current = obs.back();
  obs.pop_back();
  Anticipation knobs;  // horizon 2m, confidence 0.6, 3 observations
  const CeilingForecast f =
      forecastCeiling(obs, current, r.maxReplicas, r.leadSeconds, knobs, kNow);
  EXPECT_EQ(f.reaches, r.reaches) << r.what << ": " << f.why;
  if (r.eta >= 0) {
    EXPECT_NEAR(f.etaSeconds, r.eta, 0.5) << r.what << ": " << f.why;
  }
  if (r.predicted > 0) {
    EXPECT_EQ(f.predictedWanted, r.predicted) << r.what << ": " << f.why;
  }
  EXPECT_FALSE(f.why.empty()) << r.what;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ForecastTable,
    ::testing::Values(
        Row{"a step far beyond the ceiling acts at once, on one observation",
            {40},
            7,
            20,
            true,
            0,
            40},
        Row{"just over the ceiling once is not enough", {8}, 7, 20, false, 0, 0},
        Row{"just over the ceiling three times in a row is", {8, 8, 8}, 7, 20, true, 0, 0},
        Row{"a steady climb reaching the ceiling within the lead time",
            {3, 4, 5, 6},
            7,
            20,
            true,
            15,
            0},
        Row{"a steady climb still too far ahead for the lead time", {1, 2, 3}, 7, 20, false, 60, 0},
        Row{"the same climb with a longer lead time acts", {1, 2, 3}, 7, 60, true, 60, 0},
        Row{"a climb predicts what the HPA will want after the lead time",
            {3, 4, 5, 6},
            7,
            60,
            true,
            15,
            10},
        Row{"two observations are no trend", {5, 6}, 7, 20, false, -1, 0},
        Row{"flat demand below the ceiling", {5, 5, 5, 5}, 7, 20, false, -1, 0},
        Row{"falling demand", {6, 5, 4, 3}, 7, 20, false, -1, 0},
        Row{"noise is not a trend", {2, 6, 1, 6, 2, 6}, 7, 120, false, -1, 0},
        Row{"at the ceiling and still rising", {5, 6, 7}, 7, 20, true, 0, 0}));

TEST(ForecastTest, DisabledNeverReaches) {
  Anticipation off;
  off.enabled = false;
  auto obs = every15s({40});
  EXPECT_FALSE(forecastCeiling({}, obs.back(), 7, 20, off, kNow).reaches);
}

TEST(ForecastTest, ObservationsOutsideTheHorizonAreIgnored) {
  Anticipation knobs;
  knobs.horizon = std::chrono::seconds(20);
  auto obs = every15s({3, 4, 5, 6});  // only the one 15 s ago is within 20 s
  const HpaObservation current = obs.back();
  obs.pop_back();
  const auto f = forecastCeiling(obs, current, 7, 20, knobs, kNow);
  EXPECT_FALSE(f.reaches) << f.why;
}

TEST(ForecastTest, AStartUpTransientIsNoTrend) {
  Anticipation knobs;  // minSpan 30 s
  std::vector<HpaObservation> obs{{kNow - std::chrono::seconds(10), 1, 1, 1},
                                  {kNow - std::chrono::seconds(5), 1, 2, 2}};
  const auto f = forecastCeiling(obs, {kNow, 2, 3, 3}, 7, 60, knobs, kNow);
  EXPECT_FALSE(f.reaches) << "1, 2, 3 within 10 s: " << f.why;
  const auto beyond = forecastCeiling(obs, {kNow, 2, 5, 14}, 7, 60, knobs, kNow);
  EXPECT_TRUE(beyond.reaches) << beyond.why;
  EXPECT_EQ(beyond.predictedWanted, 14) << "no trend to project: what the formula wants now";
  knobs.minSpan = std::chrono::seconds(10);
  EXPECT_TRUE(forecastCeiling(obs, {kNow, 2, 3, 3}, 7, 60, knobs, kNow).reaches);
}

TEST(ForecastTest, LeadTimeIsTheLongestOfThePolicysLevers) {
  Policy p;
  EXPECT_EQ(leadSecondsFor(p), 60) << "migReshape 60 s, timeSlicing 20 s";
  p.levers = {Lever::kTimeSlicing};
  EXPECT_EQ(leadSecondsFor(p), 20);
}

TEST(ForecastTest, PolicyKnobsParseAndDefault) {
  const Policy p = testing::onePolicy(
      "name: a\nhpaNamespaces: [default]\npriority: 5\nanticipation:\n  enabled: false\n"
      "  horizon: 5m\n  minConfidence: 0.8\n  minObservations: 4\n  minSpan: 1m\n"
      "  leadTime: {timeSlicing: 9s}\n");
  EXPECT_EQ(p.priority, 5);
  EXPECT_FALSE(p.anticipation.enabled);
  EXPECT_EQ(p.anticipation.horizon, std::chrono::seconds(300));
  EXPECT_DOUBLE_EQ(p.anticipation.minConfidence, 0.8);
  EXPECT_EQ(p.anticipation.minObservations, 4);
  EXPECT_EQ(p.anticipation.minSpan, std::chrono::seconds(60));
  EXPECT_EQ(p.anticipation.leadTime.at(Lever::kTimeSlicing), std::chrono::seconds(9));
  EXPECT_EQ(p.anticipation.leadTime.at(Lever::kMigReshape), std::chrono::seconds(60));

  const Policy plain = testing::onePolicy("name: a\nhpaNamespaces: [default]\n");
  EXPECT_TRUE(plain.anticipation.enabled) << "on by default";
  EXPECT_FALSE(plain.priority) << "unset: the PriorityClass decides";

  for (const char* bad : {"anticipation: {minConfidence: 2}", "anticipation: {leadTime: {x: 1s}}",
                          "anticipation: {minObservations: 1}", "anticipation: {soon: true}"}) {
    EXPECT_FALSE(parsePolicies(std::string("name: a\nhpaNamespaces: [default]\n") + bad).ok())
        << bad;
  }
}

}  // namespace ceiling_forecast_test
}  // namespace gpuscale::partition
