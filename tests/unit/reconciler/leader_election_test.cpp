#include "gpuscale/reconciler/leader_election.h"

#include <gtest/gtest.h>

#include "fakes/fake_kube_client.h"

namespace gpuscale::reconciler {
namespace leader_election_test {

using namespace std::chrono_literals;
using Clock = LeaderElector::Clock;

class LeaderElectionTest : public ::testing::Test {
 protected:
  std::unique_ptr<LeaderElector> candidate(const std::string& id) {
    LeaderElectionOptions o;
    o.identity = id;
    o.leaseDuration = 15s;
    o.renewDeadline = 10s;
    o.now = [this] { return clock_; };
    return std::make_unique<LeaderElector>(fake_, o);
  }
  nlohmann::json lease() {
    return *fake_->get(
        kube::ResourceRef::collection("coordination.k8s.io", "v1", "leases", "default")
            .named("gpuscale-reconciler"));
  }
  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake_ =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  Clock::time_point t0_ = Clock::time_point{} + 1000s;
  Clock::time_point clock_ = t0_;  // what isLeader() takes for now
};

TEST_F(LeaderElectionTest, OneLeaderUntilTheLeaseExpiresThenTakeover) {
  auto a = candidate("a");
  auto b = candidate("b");
  EXPECT_TRUE(a->tryAcquireOrRenew(t0_));
  EXPECT_FALSE(b->tryAcquireOrRenew(t0_));
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "a");

  // a renews; b keeps seeing a changing record, so the lease never looks expired to it.
  EXPECT_TRUE(a->tryAcquireOrRenew(t0_ + 10s));
  EXPECT_FALSE(b->tryAcquireOrRenew(t0_ + 12s));
  EXPECT_FALSE(b->tryAcquireOrRenew(t0_ + 26s));  // 14 s since b saw the renewal
  // a stops renewing; 15 s after b last saw the record change, b takes over.
  EXPECT_TRUE(b->tryAcquireOrRenew(t0_ + 27s));
  EXPECT_FALSE(b->identity().empty());
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "b");
  EXPECT_EQ(lease()["spec"]["leaseTransitions"], 1);
  // a comes back: the record changed under it, so it follows.
  EXPECT_FALSE(a->tryAcquireOrRenew(t0_ + 28s));
  EXPECT_FALSE(a->isLeader());
}

TEST_F(LeaderElectionTest, ReleaseLetsTheNextCandidateInAtOnce) {
  auto a = candidate("a");
  auto b = candidate("b");
  ASSERT_TRUE(a->tryAcquireOrRenew(t0_));
  EXPECT_FALSE(b->tryAcquireOrRenew(t0_ + 1s));
  a->release();
  EXPECT_FALSE(a->isLeader());
  EXPECT_TRUE(b->tryAcquireOrRenew(t0_ + 2s));
}

TEST_F(LeaderElectionTest, RacingCandidatesCannotBothWin) {
  auto a = candidate("a");
  ASSERT_TRUE(a->tryAcquireOrRenew(t0_));
  // b and c both find the lease expired; the API server takes only the first write.
  auto b = candidate("b");
  auto c = candidate("c");
  EXPECT_FALSE(b->tryAcquireOrRenew(t0_ + 1s));
  EXPECT_FALSE(c->tryAcquireOrRenew(t0_ + 1s));
  fake_->failNext("update", core::Status(409, "Conflict", "the object has been modified"), 1);
  EXPECT_FALSE(c->tryAcquireOrRenew(t0_ + 20s));  // lost the race
  EXPECT_TRUE(b->tryAcquireOrRenew(t0_ + 20s));
  EXPECT_FALSE(c->tryAcquireOrRenew(t0_ + 21s));
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "b");
}

TEST_F(LeaderElectionTest, LeaderThatCannotRenewPastTheDeadlineStepsDown) {
  auto a = candidate("a");
  ASSERT_TRUE(a->tryAcquireOrRenew(t0_));
  fake_->failNext("get", core::Status::unavailable("apiserver down"), 2);
  EXPECT_TRUE(a->tryAcquireOrRenew(t0_ + 5s));    // within the renew deadline
  EXPECT_FALSE(a->tryAcquireOrRenew(t0_ + 11s));  // past it
}

TEST_F(LeaderElectionTest, LeadershipEndsAtTheRenewDeadlineWithoutAnyAttempt) {
  // The renew loop may be stuck (a hung request, a paused process): nothing calls
  // tryAcquireOrRenew, yet isLeader() must turn false once the deadline passes.
  auto a = candidate("a");
  ASSERT_TRUE(a->tryAcquireOrRenew(t0_));
  clock_ = t0_ + 9s;
  EXPECT_TRUE(a->isLeader());
  clock_ = t0_ + 10s;
  EXPECT_FALSE(a->isLeader());
  // A renewal (counted from when it was sent) restores it.
  EXPECT_TRUE(a->tryAcquireOrRenew(t0_ + 10s));
  EXPECT_TRUE(a->isLeader());
  clock_ = t0_ + 19s;
  EXPECT_TRUE(a->isLeader());
  clock_ = t0_ + 20s;
  EXPECT_FALSE(a->isLeader());
}

TEST_F(LeaderElectionTest, AnotherHolderInTheLeaseEndsLeadershipAtOnce) {
  auto a = candidate("a");
  ASSERT_TRUE(a->tryAcquireOrRenew(t0_));
  // Someone with another view of time took the Lease.
  auto taken = lease();
  taken["spec"]["holderIdentity"] = "b";
  ASSERT_TRUE(
      fake_
          ->update(kube::ResourceRef::collection("coordination.k8s.io", "v1", "leases", "default")
                       .named("gpuscale-reconciler"),
                   taken)
          .ok());
  clock_ = t0_ + 1s;
  EXPECT_FALSE(a->tryAcquireOrRenew(clock_));
  EXPECT_FALSE(a->isLeader());
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "b") << "a did not write over it";
}

}  // namespace leader_election_test
}  // namespace gpuscale::reconciler
