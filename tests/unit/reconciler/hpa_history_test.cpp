#include "gpuscale/reconciler/hpa_history.h"

#include <gtest/gtest.h>

namespace gpuscale::reconciler {
namespace hpa_history_test {

using std::chrono::seconds;
const partition::TimePoint kT0{seconds(1'800'000'000)};

struct Fixture {
  partition::HpaState hpa;
  partition::WorkloadDemand w;
  Fixture() {
    hpa.ns = "default";
    hpa.name = "triton";
    hpa.uid = "u1";
    w.ns = hpa.ns;
    w.name = hpa.name;
    w.hpa = &hpa;
  }
  void observe(HpaHistory& h, int current, int wanted, partition::TimePoint at) {
    hpa.currentReplicas = hpa.desiredReplicas = current;
    w.wanted = wanted;
    h.record({w}, at);
  }
  std::vector<partition::HpaObservation> replay(const HpaHistory& h) const {
    partition::ClusterSnapshot s;
    s.hpas.push_back(hpa);
    s.hpas.back().history.clear();
    h.applyTo(s);
    return s.hpas.front().history;
  }
};

TEST(HpaHistoryTest, KeepsChangesAndOnePerSpacing) {
  HpaHistory h(seconds(15));
  Fixture f;
  f.observe(h, 1, 2, kT0);
  f.observe(h, 1, 2, kT0 + seconds(5));   // same, too soon: dropped
  f.observe(h, 2, 4, kT0 + seconds(6));   // changed: kept
  f.observe(h, 2, 4, kT0 + seconds(21));  // same, a spacing later: kept
  auto obs = f.replay(h);
  ASSERT_EQ(obs.size(), 3u);
  EXPECT_EQ(obs[1].wanted, 4);
  EXPECT_EQ(obs[2].at, kT0 + seconds(21));
}

TEST(HpaHistoryTest, BoundedByCountAndAge) {
  HpaHistory h(seconds(1), seconds(60), 4);
  Fixture f;
  for (int i = 0; i < 10; ++i) f.observe(h, 1, i, kT0 + seconds(i));
  EXPECT_EQ(f.replay(h).size(), 4u);
  f.observe(h, 1, 99, kT0 + seconds(200));
  ASSERT_EQ(f.replay(h).size(), 1u) << "older than a minute";
}

TEST(HpaHistoryTest, ForgetsHpasGoneAndRecreated) {
  HpaHistory h;
  Fixture f;
  f.observe(h, 1, 2, kT0);
  f.hpa.uid = "u2";
  EXPECT_TRUE(f.replay(h).empty()) << "a recreated HPA inherits nothing";
  h.record({}, kT0 + seconds(1));
  EXPECT_EQ(h.size(), 0u);
}

}  // namespace hpa_history_test
}  // namespace gpuscale::reconciler
