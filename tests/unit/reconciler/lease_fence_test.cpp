#include "gpuscale/reconciler/lease_fence.h"

#include <gtest/gtest.h>

#include "fakes/fake_kube_client.h"
#include "gpuscale/reconciler/fenced_client.h"
#include "gpuscale/reconciler/leader_election.h"

namespace gpuscale::reconciler {
namespace lease_fence_test {

using namespace std::chrono_literals;
using Clock = LeaseFence::Clock;

struct LeftCase {
  const char* what;
  Clock::duration left;
  bool open;
};

class LeaseFenceTest : public ::testing::TestWithParam<LeftCase> {};

TEST_P(LeaseFenceTest, OpenForWhatLeadershipHasLeftElseNotLeader) {
  const auto& c = GetParam();
  LeaseFence fence([&] { return c.left; });
  const auto before = Clock::now();
  auto open = fence.openUntil();
  const auto after = Clock::now();
  ASSERT_EQ(open.ok(), c.open) << c.what;
  if (c.open) {
    EXPECT_GE(*open, before + c.left) << c.what;
    EXPECT_LE(*open, after + c.left) << c.what;
  } else {
    EXPECT_TRUE(isNotLeader(open.status())) << c.what;
    EXPECT_EQ(open.status().httpCode(), 503) << c.what;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, LeaseFenceTest,
                         ::testing::Values(LeftCase{"leads for 6 more seconds", 6s, true},
                                           LeftCase{"leads for 1 more millisecond", 1ms, true},
                                           LeftCase{"leadership just ended", 0s, false},
                                           LeftCase{"leadership ended a while ago", -3s, false}));

TEST(LeaderElectorTest, LeadershipLeftCountsDownToTheRenewDeadline) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  const Clock::time_point t0 = Clock::time_point{} + 1000s;
  Clock::time_point now = t0;
  LeaderElectionOptions o;
  o.identity = "a";
  o.leaseDuration = 15s;
  o.renewDeadline = 10s;
  o.now = [&] { return now; };
  LeaderElector elector(fake, o);
  EXPECT_LE(elector.leadershipLeft(), 0s) << "not the leader before acquiring";
  ASSERT_TRUE(elector.tryAcquireOrRenew(t0));
  now = t0 + 4s;
  EXPECT_EQ(elector.leadershipLeft(), 6s);
  // The fence built on it is open until then, and closed after.
  LeaseFence fence([&] { return elector.leadershipLeft(); });
  EXPECT_TRUE(fence.openUntil().ok());
  now = t0 + 10s;
  EXPECT_EQ(elector.leadershipLeft(), 0s);
  EXPECT_TRUE(isNotLeader(fence.openUntil().status()));
  // A renewal, counted from when it was sent, opens it again.
  ASSERT_TRUE(elector.tryAcquireOrRenew(t0 + 10s));
  EXPECT_EQ(elector.leadershipLeft(), 10s);
  EXPECT_TRUE(fence.openUntil().ok());
}

}  // namespace lease_fence_test
}  // namespace gpuscale::reconciler
